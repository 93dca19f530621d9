/**
 * `hookbox serve` as a separate process for the load and latency scripts,
 * and a small JSON client for its API.
 *
 * @module
 */

const ROOT = new URL("..", import.meta.url).pathname;

/** A running `hookbox serve`. */
export interface ServeProcess {
  url: string;
  /** CPU seconds (user + system) the server process has used so far. */
  cpu(): Promise<number>;
  /** The same for its main thread alone (the one that answers requests). */
  mainThreadCpu(): Promise<number>;
  /** Its resident memory now, bytes (`/proc/<pid>/status`). */
  rss(): number;
  stop(): Promise<void>;
  /** `kill -9`: the process dies with whatever it held. */
  kill(): Promise<void>;
}

/**
 * CPU seconds used by a process, from `/proc/<pid>/stat` (utime + stime), or
 * by one of its threads (`/proc/<pid>/task/<tid>/stat`).
 */
export async function processCpu(pid: number, tid?: number): Promise<number> {
  const stat = await Deno.readTextFile(
    tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`,
  );
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Starts `hookbox serve --port 0 --db DB [args]` with `denoFlags` and waits until it listens. */
export async function startServe(options: {
  db: string;
  adminKey: string;
  denoFlags?: string[];
  args?: string[];
}): Promise<ServeProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      ...options.denoFlags ?? [],
      `${ROOT}packages/cli/main.ts`,
      "serve",
      "--port",
      "0",
      "--db",
      options.db,
      ...options.args ?? [],
    ],
    env: { HOOKBOX_ADMIN_KEY: options.adminKey },
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`server exited: ${text}`);
    text += value;
    const match = /listening on (http:\/\/\S+)/.exec(text);
    if (match) {
      (async () => {
        while (!(await reader.read()).done) { /* drain the request log */ }
      })();
      return {
        url: match[1]!,
        cpu: () => processCpu(child.pid),
        mainThreadCpu: () => processCpu(child.pid, child.pid),
        rss: () => {
          const status = Deno.readTextFileSync(`/proc/${child.pid}/status`);
          return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? NaN) * 1024;
        },
        async stop() {
          child.kill("SIGTERM");
          await child.status;
        },
        async kill() {
          child.kill("SIGKILL");
          await child.status;
        },
      };
    }
  }
}

/** One JSON request with a bearer key; the status and the parsed body. */
export async function call(url: string, method: string, path: string, key: string, body?: unknown) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}` },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
