/**
 * A real workerd for tests: the binary from npm `workerd` (its Linux package
 * ships it), installed once under `.cache/workerd` with the npm that
 * installed Deno, or `HOOKBOX_WORKERD`. Started on 127.0.0.1 only.
 */
import { npmTool } from "./_npm_tool.ts";

/** The workerd release the bundle's compatibility date is checked against. */
export const WORKERD_VERSION = "1.20261117.1";

/** Path of the workerd binary, installing it on first use. */
export function workerdBinary(): Promise<string> {
  return npmTool({
    folder: "workerd",
    spec: `workerd@${WORKERD_VERSION}`,
    binary: "node_modules/@cloudflare/workerd-linux-64/bin/workerd",
    env: "HOOKBOX_WORKERD",
  });
}

/** A running workerd. */
export interface Workerd {
  url: string;
  pid: number;
  /** What it printed (console.log of the Worker goes to stdout). */
  output(): string;
  stop(): Promise<void>;
}

/** A free TCP port on the loopback interface. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/**
 * Serves `dir/config.capnp` on a free loopback port (with `env` added to its
 * environment); resolves once `/healthz` answers.
 */
export async function startWorkerd(
  dir: string,
  env: Record<string, string> = {},
  options: { pollMs?: number; args?: string[] } = {},
): Promise<Workerd> {
  const port = freePort();
  const child = new Deno.Command(await workerdBinary(), {
    args: [
      "serve",
      `${dir}/config.capnp`,
      "--socket-addr",
      `http=127.0.0.1:${port}`,
      "--verbose",
      ...options.args ?? [],
    ],
    stdout: "piped",
    stderr: "piped",
    env,
  }).spawn();
  let text = "";
  const decoder = new TextDecoder();
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) text += decoder.decode(chunk);
  };
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]);
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch { /* exited */ }
    await child.status;
    await drained;
  };
  const deadline = Date.now() + 30_000;
  let exited = false;
  child.status.then(() => exited = true);
  for (;;) {
    try {
      const res = await fetch(`${url}/healthz`);
      await res.body?.cancel();
      if (res.ok) break;
    } catch { /* not up yet */ }
    if (exited || Date.now() > deadline) {
      await stop();
      throw new Error(`workerd did not start: ${text}`);
    }
    await new Promise((r) => setTimeout(r, options.pollMs ?? 50));
  }
  return { url, pid: child.pid, output: () => text, stop };
}
