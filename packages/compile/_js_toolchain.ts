/**
 * Host tools the JS compiler needs (Deno-only): clang/wasi-libc for the
 * engine, the QuickJS sources and the Wizer binary from npm, and a helper to
 * run a command.
 *
 * npm packages are installed with `npm install --prefix .cache/npm` at pinned
 * versions, so a clean machine gets the same QuickJS and Wizer every time.
 *
 * @module
 */
import { HookboxError } from "../core/errors.ts";
import { concatBytes } from "../core/bytes.ts";
import { boundedCommand, canBoundCommands, endedAtCpuLimit } from "../host-deno/outlive.ts";

/** Exact apt command printed when the C toolchain is missing. */
export const APT_HINT = "apt-get install -y clang lld wasi-libc libclang-rt-14-dev-wasm32";

/** Pinned npm packages the JS pipeline downloads into `.cache/npm`. */
export const NPM_PACKAGES = ["qjsc@0.3.0", "@bytecodealliance/wizer@11.0.3"] as const;

/**
 * The repository root (two levels above this file). The bundled CLI
 * (`dist/cli/`) is two levels deep too, so paths made this way hold there:
 * the files of this package that find `plugins/` or `.cache/` stay at its top.
 */
export const REPO_ROOT = new URL("../../", import.meta.url).pathname;

/** `.cache/npm`: where the pinned npm packages are installed. */
export const NPM_PREFIX = `${REPO_ROOT}.cache/npm`;

/** Directory holding quickjs.c and friends (QuickJS 2021-03-27 from npm `qjsc`). */
export const QUICKJS_DIR = `${NPM_PREFIX}/node_modules/qjsc/deps/quickjs_2021_03_27`;

/** The Wizer executable from npm `@bytecodealliance/wizer-linux-x64`. */
export const WIZER_BIN = `${NPM_PREFIX}/node_modules/@bytecodealliance/wizer-linux-x64/wizer`;

const WASI_FILES = [
  "/usr/lib/wasm32-wasi/libc.a",
  "/usr/include/wasm32-wasi/stdio.h",
];

/** Result of a finished subprocess. */
export interface CommandOutput {
  /** The exit code. */
  code: number;
  /** What it printed on stdout. */
  stdout: Uint8Array;
  /** What it printed on stderr, as text. */
  stderr: string;
  /** The process was killed at `timeoutMs`. */
  timedOut?: boolean;
  /** The process ended at `cpuMs` of CPU time. */
  cpuLimited?: boolean;
}

/** Bounds on a subprocess. */
export interface CommandLimits {
  /** Kill the process after this long. @default no limit */
  timeoutMs?: number;
  /**
   * End the process once it has used this much CPU time (whole seconds,
   * rounded up; only with `timeoutMs`, where commands can be wrapped).
   * @default no limit
   */
  cpuMs?: number;
  /** Keep at most this many bytes of stdout and of stderr (the rest is read and dropped). @default no limit */
  maxOutput?: number;
}

/**
 * Commands under way. A hook call may answer while one of its builds still runs
 * (the event's deadline passed): when the process exits, they are killed, or a
 * build of a hook whose top level never ends would run on without anyone to
 * stop it.
 */
const live = new Map<Deno.ChildProcess, boolean>();
let killOnExit = false;

function killLive(): void {
  for (const [child, wrapped] of live) stop(child, wrapped);
  live.clear();
}

/**
 * Kills `child` and what it started: a wrapped command is the process group
 * the wrapper leads (killing the wrapper alone would leave the command
 * running with nobody to stop it).
 */
function stop(child: Deno.ChildProcess, wrapped: boolean): void {
  try {
    if (wrapped) Deno.kill(-child.pid, "SIGKILL");
    else child.kill("SIGKILL");
  } catch {
    // Not yet a group (the wrapper had not set it up): it passes SIGTERM on once it runs.
    try {
      child.kill("SIGTERM");
    } catch { /* already gone */ }
  }
}

/** Runs `cmd args...`, feeding `stdin` if given; never throws for a non-zero exit. */
export async function runCommand(
  cmd: string,
  args: string[],
  stdin?: Uint8Array,
  limits: CommandLimits = {},
): Promise<CommandOutput> {
  // With a time limit, nothing runs past it even if this process is killed first.
  const wrapped = limits.timeoutMs !== undefined && canBoundCommands();
  const [program, programArgs] = wrapped
    ? boundedCommand(cmd, args, limits.timeoutMs!, limits.cpuMs)
    : [cmd, args];
  const child = new Deno.Command(program, {
    args: programArgs,
    stdin: stdin ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (!killOnExit) {
    killOnExit = true;
    globalThis.addEventListener("unload", killLive);
  }
  live.set(child, wrapped);
  let timedOut = false;
  const timer = limits.timeoutMs === undefined ? undefined : setTimeout(() => {
    timedOut = true;
    stop(child, wrapped);
  }, limits.timeoutMs);
  try {
    if (stdin) {
      const writer = child.stdin.getWriter();
      await writer.write(stdin).catch(() => {});
      await writer.close().catch(() => {});
    }
    const cap = limits.maxOutput ?? Infinity;
    const [stdout, stderr, status] = await Promise.all([
      readCapped(child.stdout, cap),
      readCapped(child.stderr, cap),
      child.status,
    ]);
    return {
      code: status.code,
      stdout,
      stderr: new TextDecoder().decode(stderr),
      ...(timedOut ? { timedOut } : {}),
      ...(!timedOut && wrapped && limits.cpuMs !== undefined && endedAtCpuLimit(status)
        ? { cpuLimited: true }
        : {}),
    };
  } finally {
    clearTimeout(timer);
    live.delete(child);
  }
}

/** Reads a stream to its end, keeping the first `cap` bytes. */
async function readCapped(stream: ReadableStream<Uint8Array>, cap: number): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let kept = 0;
  for await (const chunk of stream) {
    if (kept >= cap) continue;
    const part = chunk.subarray(0, Math.min(chunk.length, cap - kept));
    parts.push(part);
    kept += part.length;
  }
  return concatBytes(parts, kept);
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

/** `clang --version` first line; throws TOOLCHAIN_MISSING naming the apt packages. */
export async function checkClang(): Promise<string> {
  let version = "";
  try {
    const out = await runCommand("clang", ["--version"]);
    version = out.code === 0 ? new TextDecoder().decode(out.stdout).split("\n")[0] ?? "" : "";
  } catch { /* not installed */ }
  const missing = !version || !(await exists("/usr/bin/wasm-ld")) ||
    !(await Promise.all(WASI_FILES.map(exists))).every(Boolean);
  if (missing) {
    throw new HookboxError(
      "TOOLCHAIN_MISSING",
      `the wasm32-wasi C toolchain is missing; install it with: ${APT_HINT}`,
    );
  }
  return version;
}

/** Installs the pinned npm packages into `.cache/npm` unless already there. */
export async function ensureNpmPackages(): Promise<void> {
  if ((await exists(`${QUICKJS_DIR}/quickjs.c`)) && (await exists(WIZER_BIN))) return;
  await Deno.mkdir(NPM_PREFIX, { recursive: true });
  const args = ["install", "--prefix", NPM_PREFIX, "--no-save", "--ignore-scripts"];
  const out = await runCommand("npm", [...args, "--no-audit", "--no-fund", ...NPM_PACKAGES]);
  if (out.code !== 0 || !(await exists(`${QUICKJS_DIR}/quickjs.c`))) {
    throw new HookboxError(
      "TOOLCHAIN_MISSING",
      `npm install ${NPM_PACKAGES.join(" ")} into ${NPM_PREFIX} failed: ${out.stderr.trim()}`,
    );
  }
}
