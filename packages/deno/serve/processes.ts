/**
 * `hookbox serve --processes N`: N server processes on one port (Linux
 * `SO_REUSEPORT`: the kernel spreads connections over them) and one store,
 * so the service uses every core. This process supervises: it migrates the
 * store and settles the admin key once, starts the N processes, says
 * `listening on …` when all of them listen, passes their log lines on,
 * starts again one that dies, and on SIGINT/SIGTERM stops them all (each
 * drains, flushes its audit and exits). A process whose supervisor is gone,
 * however it ended, stops the same way: none serves on, unsupervised, beside
 * the processes of a supervisor started again. Quotas and leases are counted in
 * the store and every process commits its own audit rows, so N processes
 * admit what one would and lose no audit row.
 *
 * @module
 */
import { HookboxError } from "../../core/errors.ts";
import { adminKeyOf, openStore, type ServeOptions } from "./serve.ts";
import { queuedWrites } from "./log_queue.ts";

/** The environment variable that makes a `hookbox serve` one of N (its index). */
export const PROCESS_ENV = "HOOKBOX_SERVE_PROCESS";
/** The port the supervisor chose, for its processes. */
export const PORT_ENV = "HOOKBOX_SERVE_PORT";

/**
 * Resolves when this process's supervisor has gone: its stdin, a pipe the
 * supervisor holds open and never writes, ends (or fails) only then.
 */
export async function untilSupervisorGone(): Promise<void> {
  try {
    for await (const _ of Deno.stdin.readable) { /* nothing is sent */ }
  } catch { /* a failed read: the pipe is gone all the same */ }
}

/** Shortest time between two starts of the same process after it died. */
const RESTART_MS = 1000;

/** What the supervisor needs: the serve command line to give each process, and the options. */
export interface SuperviseOptions {
  /** The `serve` arguments as given (each process gets them again). */
  args: string[];
  /** How many processes. */
  processes: number;
  /** The options they parse to (store, key, port, hostname). */
  serve: ServeOptions;
}

/** Runs N server processes until SIGINT or SIGTERM; returns the exit code. */
export async function superviseServe(options: SuperviseOptions): Promise<number> {
  const { processes, serve } = options;
  // Its own lines and its processes' go out from a queue: a slow reader of its stderr never
  // stops it reading its processes' lines or starting one again.
  let dropped = 0;
  const out = queuedWrites((bytes) => Deno.stderr.write(bytes), (lines) => dropped += lines);
  const encoder = new TextEncoder();
  const say = (line: string) => {
    try {
      if (out.enqueue(encoder.encode(`${line}\n`), 1) && dropped > 0) {
        const lines = dropped;
        dropped = 0;
        say(JSON.stringify({
          at: new Date().toISOString(),
          level: "error",
          msg: "log lines dropped: stderr was 8 MiB behind",
          lines,
        }));
      }
    } catch { /* stderr cannot be written: nobody is there to tell */ }
  };
  const log = (entry: Record<string, unknown>) =>
    say(JSON.stringify({ at: new Date().toISOString(), ...entry }));
  // Once, here: a key file made by N processes at once would be N keys.
  const { key } = await adminKeyOf(serve);
  // Migrations once, before any process opens the store.
  await (await openStore(serve.db)).close();
  const port = serve.port === 0 ? freePort(serve.hostname ?? "127.0.0.1") : serve.port ?? 8787;
  const hostname = serve.hostname ?? "127.0.0.1";
  log({ level: "info", msg: "starting processes", processes, port });

  let stopping = false;
  const children: (Deno.ChildProcess | null)[] = Array(processes).fill(null);
  const listening = new Set<number>();
  let resolveReady!: () => void;
  let rejectReady!: (err: Error) => void;
  const ready = new Promise<void>((resolve, reject) =>
    [resolveReady, rejectReady] = [resolve, reject]
  );
  let everReady = false;
  const exits: Promise<void>[] = [];

  const start = (i: number) => {
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--unstable-net", Deno.mainModule, "serve", ...options.args],
      env: { [PROCESS_ENV]: String(i), [PORT_ENV]: String(port), HOOKBOX_ADMIN_KEY: key },
      // Never written or closed here: it ends only when this process does, however it ends
      // (`kill -9`, out of memory), and then the process stops (`untilSupervisorGone`).
      stdin: "piped",
      stdout: "inherit",
      stderr: "piped",
    }).spawn();
    children[i] = child;
    // Its lines on: its JSON log lines as they are, its `listening on` line kept for the
    // supervisor's own, said once every process listens.
    (async () => {
      let rest = "";
      for await (const text of child.stderr.pipeThrough(new TextDecoderStream())) {
        rest += text;
        let at: number;
        while ((at = rest.indexOf("\n")) >= 0) {
          const line = rest.slice(0, at);
          rest = rest.slice(at + 1);
          if (line.startsWith("listening on ")) {
            listening.add(i);
            if (listening.size === processes && !everReady) {
              everReady = true;
              resolveReady();
            }
          } else say(line);
        }
      }
      if (rest !== "") say(rest);
    })().catch(() => {});
    exits[i] = child.status.then(async (status) => {
      listening.delete(i);
      if (stopping) return;
      if (!everReady) {
        rejectReady(new HookboxError("OPTION_INVALID", `process ${i} exited with ${status.code}`));
        return;
      }
      log({
        level: "error",
        msg: "process exited; starting it again",
        process: i,
        code: status.code,
      });
      await new Promise((resolve) => setTimeout(resolve, RESTART_MS));
      startAgain(i);
    });
  };
  // A process that cannot be started now (the supervisor out of file descriptors or memory) is
  // tried again, never left to end the supervisor, and with it every other process.
  const startAgain = (i: number) => {
    if (stopping) return;
    try {
      start(i);
    } catch (err) {
      log({
        level: "error",
        msg: "process could not be started again; trying again",
        process: i,
        error: String((err as Error)?.message ?? err),
      });
      setTimeout(() => startAgain(i), RESTART_MS);
    }
  };

  for (let i = 0; i < processes; i++) start(i);
  const stopAll = async () => {
    stopping = true;
    for (const child of children) {
      try {
        child?.kill("SIGTERM");
      } catch { /* it has exited */ }
    }
    const codes = await Promise.all(children.map((c) => c?.status.then((s) => s.code)));
    return codes.every((c) => c === 0) ? 0 : 1;
  };
  try {
    await ready;
  } catch (err) {
    await stopAll();
    await out.drained(); // what the processes said about it, before the error
    throw err;
  }
  say(`listening on http://${hostname}:${port}`);
  const done = new Promise<number>((resolve) => {
    const stop = () => void stopAll().then(resolve);
    Deno.addSignalListener("SIGINT", stop);
    Deno.addSignalListener("SIGTERM", stop);
  });
  const code = await done;
  log({ level: "info", msg: "processes stopped", code });
  await out.drained();
  return code;
}

/** A port free on `hostname` now (bound and let go; the processes bind it next). */
function freePort(hostname: string): number {
  const probe = Deno.listen({ hostname, port: 0 });
  const { port } = probe.addr as Deno.NetAddr;
  probe.close();
  return port;
}
