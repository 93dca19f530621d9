/**
 * `hookbox daemon [run|status|stop] [--idle SECONDS] [--calls N]`: the user's hookbox
 * daemon. It answers `hookbox dispatch --agent NAME --daemon` calls over a
 * Unix socket in a folder only its user can enter (`daemon_client.ts`). Each
 * call discovers its hooks (user, project, platform) as a new process would,
 * through the scan cache, so an edit is seen at once; compiled plugins and
 * warm instances stay between calls, so a hook call costs a small client
 * instead of a whole dispatch. The user's own, never shared: its folder is
 * the user's own (0700, checked by both sides). One per environment (HOME,
 * PATH, XDG folders, `HOOKBOX_*`: what can change an answer), its socket
 * named by the environment's key (`socketPath`), up to `MAX_DAEMONS` at once;
 * a call whose environment differs from the daemon's all the same (two keys
 * alike) is answered by its own process instead. It stops after `--idle` seconds
 * without a call (default 600), or within seconds of its socket being
 * removed or replaced, and answers up to `--calls` calls at once (default 4;
 * a call that would wait more than a quarter of a second for a turn runs in
 * its own process instead).
 *
 * @module
 */
import { parseArgs } from "node:util";
import { AsyncLocalStorage } from "node:async_hooks";
import { enableCallContexts } from "../host-deno/call_context.ts";
import { logUnhandledRejections } from "../host-deno/unhandled.ts";
import { createDenoWasmRuntime, createExecutor, type ExecutorOptions } from "../deno/executor.ts";
import type { Runtime } from "../core/runtime/types.ts";
import { AGENTS, isAgentName } from "../agents/adapters.ts";
import { parseOptions } from "./commands.ts";
import { boundBuildTime, withBuildTimeOf } from "../compile/mod.ts";
import { asCall, errorLine, EXIT, UsageError } from "./_io.ts";
import { buildMs, useExecutorMaker } from "./_executor.ts";
import { agentAnswerOf } from "./_agent_dispatch.ts";
import { ask, daemonDir, fingerprint, LATE, socketPath, unsafeDir } from "./daemon_client.ts";

/** Longest wait for a daemon's status, ms: it answers from its event loop, at once. */
const STATUS_WAIT_MS = 5_000;

/** Longest a call waits for a turn, ms; then it runs in its client's own process. */
const QUEUE_WAIT_MS = 250;

/** How often the daemon checks that its socket is still its own, ms. */
const SOCKET_CHECK_MS = 2000;

/** Largest request read, bytes (stdin is capped below it by the clients). */
const MAX_REQUEST_BYTES = 20 * 1024 * 1024;

/** Runs the command; returns the exit code. */
export async function daemonCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: parseOptions("daemon"),
    allowPositionals: true,
    strict: true,
  });
  const sub = positionals[0] ?? "run";
  if (sub === "status" || sub === "stop") {
    const answer = await ask({ op: sub }, STATUS_WAIT_MS);
    if (answer === null || answer === LATE) {
      const why = answer === null ? "none answers" : `none answered within ${STATUS_WAIT_MS} ms`;
      console.error(`hookbox daemon: ${why} at ${socketPath()}`);
      return EXIT.bad;
    }
    console.log(JSON.stringify(answer));
    return EXIT.allow;
  }
  if (sub !== "run" || positionals.length > 1) {
    throw new UsageError("usage: hookbox daemon [run|status|stop] [--idle SECONDS]");
  }
  const idle = Number(values.idle);
  if (!(idle > 0 && idle <= 86_400)) {
    throw new UsageError(`--idle must be 1-86400, got ${values.idle}`);
  }
  const calls = Number(values.calls);
  if (!(Number.isInteger(calls) && calls >= 1 && calls <= 64)) {
    throw new UsageError(`--calls must be 1-64, got ${values.calls}`);
  }
  return await runDaemon(idle * 1000, calls);
}

async function runDaemon(idleMs: number, maxCalls: number): Promise<number> {
  // A call's own deadline (`_executor.ts`) is never the daemon's.
  Deno.env.delete("HOOKBOX_DAEMON_DEADLINE");
  // Several calls at once, each with its own stdin, folder and building time.
  enableCallContexts(AsyncLocalStorage);
  // One call's fault is one line on the daemon's stderr, never the end of every caller's daemon.
  logUnhandledRejections();
  const dir = daemonDir();
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  const unsafe = unsafeDir(dir);
  if (unsafe !== null) {
    throw new UsageError(`hookbox daemon: ${unsafe}; it must be yours, mode 700`);
  }
  const path = socketPath();
  // One daemon per user: one that answers keeps the socket; a socket nobody answers is stale, and
  // so is one whose daemon is wedged (it stops once its event loop sees the socket replaced).
  const other = await ask({ op: "status" }, STATUS_WAIT_MS);
  if (other !== null && other !== LATE) return EXIT.allow;
  await Deno.remove(path).catch(() => {});
  const listener = Deno.listen({ transport: "unix", path });
  await Deno.chmod(path, 0o600);
  const socket = Deno.lstatSync(path);

  // Agents wait for its calls: building the hooks they find must not hold one past a timeout.
  boundBuildTime(buildMs());
  const own = fingerprint();
  // Each call gets an executor of its own, so it discovers its hooks as a new process would
  // (the scan cache checks every path discovery read: an edit is seen at once), and all of them
  // share one WebAssembly runtime: compiled plugins and warm instances stay between calls.
  const runtimes = new Map<string, Runtime>();
  useExecutorMaker((options: ExecutorOptions) => {
    const { warmBytes: _none, cacheDir, ...rest } = options;
    const key = cacheDir ?? "";
    let wasm = runtimes.get(key);
    if (wasm === undefined) runtimes.set(key, wasm = createDenoWasmRuntime(cacheDir));
    const shared: Runtime = { ...wasm, close: () => Promise.resolve() };
    return createExecutor({
      ...rest,
      ...(cacheDir === undefined ? {} : { cacheDir }),
      runtimes: { wasm: shared },
    });
  });

  const started = new Date().toISOString();
  let answered = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => stop = resolve);
  const rearm = () => {
    clearTimeout(timer);
    timer = setTimeout(stop, idleMs);
  };
  rearm();
  // A socket removed or replaced (its folder deleted, another daemon in its place) leaves this
  // daemon unreachable: it stops instead of waiting out its idle time.
  /** The socket at `path` is still the one this daemon listens on. */
  const ownSocket = () => {
    try {
      const now = Deno.lstatSync(path);
      return now.ino === socket.ino && now.dev === socket.dev;
    } catch {
      return false; // gone
    }
  };
  const watch = setInterval(() => {
    if (!ownSocket()) stop();
  }, SOCKET_CHECK_MS);
  // Up to `maxCalls` calls at once (`asCall` gives each its own stdin and directory; one waiting
  // for a file, such as Copilot's events, holds up no other). A call that cannot start within
  // QUEUE_WAIT_MS (long hooks of other sessions or projects run) is answered `busy`: its client
  // runs it in its own process instead of waiting.
  let running = 0;
  /** When each running call started. */
  const starts = new Set<{ at: number }>();
  /** Calls waiting for a turn: each is handed one by a call that ends. */
  const waiting: (() => void)[] = [];
  /** Every call under way (awaited before the daemon ends). */
  const underWay = new Set<Promise<unknown>>();
  const inTurn = async (
    call: () => Promise<Record<string, unknown>>,
  ): Promise<Record<string, unknown>> => {
    if (running < maxCalls) running++;
    else {
      let handed = false;
      let wake!: () => void;
      const woken = new Promise<void>((resolve) => wake = () => (handed = true, resolve()));
      waiting.push(wake);
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        woken,
        new Promise((resolve) => timer = setTimeout(resolve, QUEUE_WAIT_MS)),
      ]);
      clearTimeout(timer);
      if (!handed) {
        waiting.splice(waiting.indexOf(wake), 1);
        return { busy: true };
      }
    }
    const start = { at: performance.now() };
    starts.add(start);
    const work = call();
    underWay.add(work);
    try {
      return await work;
    } finally {
      underWay.delete(work);
      starts.delete(start);
      // The turn passes to the longest waiting call, if any.
      const next = waiting.shift();
      if (next !== undefined) next();
      else running--;
    }
  };
  const serve = async (conn: Deno.UnixConn) => {
    try {
      const read = await readRequest(conn);
      rearm();
      if (read.kind === "framed") {
        // The small client's call (packages/cli/client/hookbox_client.c): its answer in bytes.
        const call = read.call;
        const answer = call === null ? { mismatch: true } : await inTurn(() => dispatch(call, own));
        if (typeof answer.exit === "number") answered++;
        await writeAll(conn, framedAnswer(answer));
        return;
      }
      const request = read.value;
      let answer: Record<string, unknown>;
      if (request.op === "status") {
        answer = {
          pid: Deno.pid,
          started_at: started,
          answered,
          socket: path,
          // Calls it is answering, and how long the longest of them has run, ms (null: none).
          running: starts.size,
          running_ms: starts.size === 0
            ? null
            : Math.round(performance.now() - Math.min(...[...starts].map((s) => s.at))),
        };
      } else if (request.op === "stop") {
        answer = { stopping: true, pid: Deno.pid };
        stop();
      } else if (request.op === "dispatch") {
        answer = await inTurn(() => dispatch(request, own));
        if (typeof answer.exit === "number") answered++;
      } else answer = { error: `unknown op ${String(request.op)}` };
      await conn.write(new TextEncoder().encode(JSON.stringify(answer) + "\n"));
    } catch {
      // A caller that went away or sent nonsense: nothing to answer.
    } finally {
      try {
        conn.close();
      } catch { /* closed */ }
    }
  };
  // An accept that fails (the process out of file descriptors) ends the listening for good: the
  // daemon stops, its socket goes, and callers run in their own processes at once (the next one
  // starts a daemon again) instead of waiting out their answer time on a socket nobody accepts on.
  (async () => {
    for await (const conn of listener) void serve(conn as Deno.UnixConn);
  })().catch((err) => {
    console.error(`hookbox daemon: stopping: accepting failed: ${(err as Error)?.message ?? err}`);
    stop();
  });
  await stopped;
  clearTimeout(timer);
  clearInterval(watch);
  // Removed only while it is still this daemon's: never another's that took its place.
  const mine = ownSocket();
  stopListening(listener, mine);
  if (mine) await Deno.remove(path).catch(() => {});
  await Promise.allSettled([...underWay]);
  await Promise.all([...runtimes.values()].map((r) => r.close?.()));
  return EXIT.allow;
}

/**
 * Stops taking connections on `listener`. Deno removes a Unix listener's path
 * once the listener is closed and dropped (denoland/deno#31947), whoever's
 * socket the path is by then: a listener whose path is no longer `mine`
 * (another daemon took its place) is not closed but left to end with the
 * process (`Deno.exit` drops nothing), so the newcomer keeps its socket.
 */
export function stopListening(listener: Deno.Listener, mine: boolean): void {
  if (mine) listener.close();
  else listener.unref();
}

/** Answers one dispatch call as `hookbox dispatch --agent` in the caller's process would. */
async function dispatch(
  request: Record<string, unknown>,
  own: string,
): Promise<Record<string, unknown>> {
  // Another environment could find other hooks or grant them other variables: not here.
  if (request.fingerprint !== own) return { mismatch: true };
  const args = Array.isArray(request.args) ? request.args.map(String) : [];
  const stdin = String(request.stdin ?? "");
  const cwd = typeof request.cwd === "string" && request.cwd.startsWith("/") ? request.cwd : "/";
  try {
    const { values } = parseArgs({
      args,
      options: parseOptions("dispatch"),
      strict: true,
      allowPositionals: false,
    });
    const agent = values.agent;
    if (agent === undefined || !isAgentName(agent)) {
      throw new UsageError(`unknown agent "${agent}"; one of ${AGENTS.join(", ")}`);
    }
    // Each project builds within its own building time: a repository's hooks that never
    // finish building cannot use up the time the user's other projects build in.
    const answer = await asCall(
      { stdin, cwd },
      () => withBuildTimeOf(cwd, () => agentAnswerOf(agent, values, {})),
    );
    return { exit: answer.exitCode, stdout: answer.stdout, stderr: answer.stderr };
  } catch (err) {
    return { exit: EXIT.bad, stdout: "", stderr: errorLine(err) };
  }
}

/** The bytes of a framed answer: what the CLI would write to stdout and stderr, and its exit code. */
function framedAnswer(answer: Record<string, unknown>): Uint8Array {
  const encoder = new TextEncoder();
  if (typeof answer.exit !== "number") return encoder.encode("HBX1 no\n");
  // As `hookbox dispatch --daemon` prints them: console.log and console.error, a line each.
  const out = answer.stdout ? encoder.encode(`${answer.stdout}\n`) : new Uint8Array();
  const err = answer.stderr ? encoder.encode(`${answer.stderr}\n`) : new Uint8Array();
  const head = encoder.encode(`HBX1 ${answer.exit} ${out.length} ${err.length}\n`);
  const bytes = new Uint8Array(head.length + out.length + err.length);
  bytes.set(head);
  bytes.set(out, head.length);
  bytes.set(err, head.length + out.length);
  return bytes;
}

async function writeAll(conn: Deno.UnixConn, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
}

/** A request: a JSON line (`daemon_client.ts`), or the small client's framed call. */
type Request =
  | { kind: "json"; value: Record<string, unknown> }
  | { kind: "framed"; call: Record<string, unknown> | null };

/**
 * One request from `conn`, at most {@linkcode MAX_REQUEST_BYTES}: a JSON
 * object on one line, or "HBX1 <length>\n" and that many bytes of fields
 * (see the client's source). A framed call the daemon cannot take as it is
 * (not UTF-8, malformed) has `call` null: the client runs it in the full CLI.
 */
async function readRequest(conn: Deno.UnixConn): Promise<Request> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const buffer = new Uint8Array(64 * 1024);
  let framed: { start: number; length: number } | null = null;
  for (;;) {
    if (framed !== null && size >= framed.start + framed.length) break;
    const n = await conn.read(buffer);
    if (n === null) break;
    const chunk = buffer.slice(0, n);
    chunks.push(chunk);
    size += n;
    if (size > MAX_REQUEST_BYTES + 64) throw new Error("request too large");
    if (framed === null && size >= 5 && startsFramed(chunks)) {
      const head = joined(chunks, size);
      const end = head.indexOf(10);
      if (end < 0) {
        if (size > 32) throw new Error("no framed header");
        continue;
      }
      const length = Number(new TextDecoder().decode(head.subarray(5, end)));
      if (!Number.isSafeInteger(length) || length < 0 || length > MAX_REQUEST_BYTES) {
        throw new Error("bad framed length");
      }
      framed = { start: end + 1, length };
      continue;
    }
    if (framed === null && !startsFramed(chunks) && chunk.includes(10)) break;
  }
  const bytes = joined(chunks, size);
  if (framed !== null) {
    if (bytes.length < framed.start + framed.length) throw new Error("framed call cut short");
    return {
      kind: "framed",
      call: framedCall(bytes.subarray(framed.start, framed.start + framed.length)),
    };
  }
  const text = new TextDecoder().decode(bytes);
  const line = text.slice(0, text.indexOf("\n") >= 0 ? text.indexOf("\n") : text.length);
  const value = JSON.parse(line);
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new Error("not an object");
  }
  return { kind: "json", value };
}

const FRAMED = new TextEncoder().encode("HBX1 ");

function startsFramed(chunks: Uint8Array[]): boolean {
  const first = joined(chunks, Math.min(5, chunks.reduce((n, c) => n + c.length, 0)));
  return first.length === 5 && first.every((b, i) => b === FRAMED[i]);
}

/** The first `size` bytes of `chunks`, as one array. */
function joined(chunks: Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!.subarray(0, size);
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    if (at >= size) break;
    bytes.set(c.subarray(0, size - at), at);
    at += Math.min(c.length, size - at);
  }
  return bytes;
}

/**
 * The dispatch request in a framed payload: fields "dispatch", folder, stdin,
 * argument count, the arguments, then variable names and values; null when
 * it is not one, or a field is not UTF-8.
 */
function framedCall(payload: Uint8Array): Record<string, unknown> | null {
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  const fields: string[] = [];
  let at = 0;
  try {
    while (at < payload.length) {
      let colon = at;
      while (colon < payload.length && colon - at <= 10 && payload[colon] !== 58) colon++;
      const digits = new TextDecoder().decode(payload.subarray(at, colon));
      if (payload[colon] !== 58 || !/^\d{1,10}$/.test(digits)) return null;
      const end = colon + 1 + Number(digits);
      if (end > payload.length) return null;
      fields.push(decoder.decode(payload.subarray(colon + 1, end)));
      at = end;
    }
  } catch {
    return null; // not UTF-8: the full CLI reads it as it reads any stdin
  }
  const [op, cwd, stdin, count, ...rest] = fields;
  const n = Number(count);
  if (op !== "dispatch" || cwd === undefined || stdin === undefined || !/^\d+$/.test(count ?? "")) {
    return null;
  }
  if (n > rest.length || (rest.length - n) % 2 !== 0) return null;
  const env: Record<string, string> = {};
  for (let i = n; i < rest.length; i += 2) env[rest[i]!] = rest[i + 1]!;
  return { op, fingerprint: fingerprint(env), args: rest.slice(0, n), cwd, stdin };
}
