/**
 * workerd for the edge benchmarks: the "ok" Worker measured beside hookbox's,
 * and what a Worker's isolate holds, read over workerd's inspector protocol
 * (the figure a Workers memory limit counts, unlike the process's RSS, which
 * includes workerd itself, compiled code and freed memory not returned).
 *
 * @module
 */

/** Writes into `dir` a Worker that answers every request with "ok", and its workerd config. */
export async function writeOkWorker(dir: string): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(
    `${dir}/worker.js`,
    `export default { fetch() { return new Response("ok"); } };`,
  );
  await Deno.writeTextFile(
    `${dir}/config.capnp`,
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .w) ],
  sockets = [ (name = "http", address = "127.0.0.1:0", http = (), service = "main") ],
);
const w :Workerd.Worker = (
  modules = [ (name = "worker.js", esModule = embed "worker.js") ],
  compatibilityDate = "2025-09-01",
);
`,
  );
}

/** JS heap used (garbage included) and backing stores of the Worker's isolate, in MB. */
export async function isolateMemory(port: number): Promise<{ heap: number; backing: number }> {
  const socket = new WebSocket(`ws://127.0.0.1:${port}/main`);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  let next = 0;
  const waiting = new Map<number, (result: Record<string, number>) => void>();
  socket.onmessage = (e) => {
    const message = JSON.parse(e.data);
    waiting.get(message.id)?.(message.result ?? {});
    waiting.delete(message.id);
  };
  const send = (method: string) =>
    new Promise<Record<string, number>>((resolve) => {
      const id = ++next;
      waiting.set(id, resolve);
      socket.send(JSON.stringify({ id, method, params: {} }));
    });
  // (workerd's inspector never answers HeapProfiler.collectGarbage: garbage is included.)
  const usage = await Promise.race([
    send("Runtime.getHeapUsage"),
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error("the inspector did not answer")), 10_000)
    ),
  ]);
  socket.close();
  return { heap: usage.usedSize! / 1e6, backing: (usage.backingStorageSize ?? NaN) / 1e6 };
}
