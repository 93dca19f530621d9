// deno-lint-ignore-file no-unused-vars -- prelude files are fragments of one function body

// hookbox prelude, part 8: the `process` object. `env` holds only the
// variables the host granted (read at run time, never from the snapshot).

let exitCode;
const nextTicks = [];

class Process extends EventEmitter {
  title = "node";
  version = "v20.0.0";
  versions = { node: "20.0.0", hookbox: "1" };
  platform = "wasi";
  arch = "wasm32";
  pid = 1;
  ppid = 0;
  argv = ["/usr/local/bin/node", hookPath];
  execArgv = [];
  execPath = "/usr/local/bin/node";
  stdin = stdin;
  stdout = stdout;
  stderr = stderr;
  release = { name: "node" };
  get exitCode() {
    return exitCode;
  }
  set exitCode(code) {
    exitCode = code === undefined || code === null ? undefined : Number(code);
  }
  exit(code) {
    if (code !== undefined) this.exitCode = code;
    const final = exitCode ?? 0;
    emitExit(final);
    host.exit(final);
  }
  abort() {
    host.exit(134);
  }
  cwd() {
    return "/hook";
  }
  chdir() {
    throw denied("process.chdir()");
  }
  nextTick(fn, ...args) {
    // Run by the engine before the promise jobs, whenever it drains them (as Node does).
    nextTicks.push(() => fn(...args));
  }
  hrtime(prev) {
    const ns = BigInt(Math.round(host.hrtime() * 1e6));
    const t = [Number(ns / 1000000000n), Number(ns % 1000000000n)];
    if (!prev) return t;
    const d = (t[0] - prev[0]) * 1e9 + t[1] - prev[1];
    return [Math.floor(d / 1e9), d % 1e9];
  }
  uptime() {
    return sinceStart() / 1e3;
  }
  memoryUsage() {
    return { rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 };
  }
  kill() {
    throw denied("process.kill()");
  }
  emitWarning(warning) {
    stderr.write(`Warning: ${warning}\n`);
  }
}
Process.prototype.hrtime.bigint = () => BigInt(Math.round(host.hrtime() * 1e6));

/** Runs the queued nextTick callbacks, and those they queue. True when one ran. */
function runNextTicks() {
  if (nextTicks.length === 0) return false;
  while (nextTicks.length > 0) for (const fn of nextTicks.splice(0)) fn();
  return true;
}

let exiting = false;
function emitExit(code) {
  if (exiting) return;
  exiting = true;
  process.emit("exit", code);
}

const process = new Process();
// The granted variables, read from the host on first use in a call (most
// hooks never look); an own, enumerable property like node's.
let grantedEnv = null;
Object.defineProperty(process, "env", {
  get: () => (grantedEnv ??= host.env()),
  set: (value) => {
    grantedEnv = value;
  },
  enumerable: true,
  configurable: true,
});
defineGlobal("process", process);
defineGlobal("global", globalThis);
defineGlobal("__filename", hookPath);
defineGlobal("__dirname", hookPath.replace(/\/[^/]*$/, ""));
