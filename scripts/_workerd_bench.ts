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

/** What a Worker's isolate holds, MB (see {@linkcode isolateMemory}). */
export interface IsolateMemory {
  /** JS heap used, after a collection. */
  heap: number;
  /** ArrayBuffers' backing stores (not WebAssembly memories). */
  backing: number;
  /** The WebAssembly memories alive. */
  wasm: number;
}

/**
 * What the Worker's isolate holds after a garbage collection, in MB: its JS
 * heap, its ArrayBuffers' backing stores and its WebAssembly memories.
 * V8's heap usage leaves the memories out, so they are found by prototype
 * (`Runtime.queryObjects`, which collects garbage first: workerd's inspector
 * never answers `HeapProfiler.collectGarbage`) and their sizes summed.
 */
export async function isolateMemory(port: number): Promise<IsolateMemory> {
  const socket = new WebSocket(`ws://127.0.0.1:${port}/main`);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  let next = 0;
  let context: (id: number) => void = () => {};
  const contextId = new Promise<number>((resolve) => context = resolve);
  const waiting = new Map<number, (message: Record<string, unknown>) => void>();
  socket.onmessage = (e) => {
    const message = JSON.parse(e.data);
    if (message.method === "Runtime.executionContextCreated") context(message.params.context.id);
    waiting.get(message.id)?.(message);
    waiting.delete(message.id);
  };
  // deno-lint-ignore no-explicit-any
  const send = (method: string, params: Record<string, unknown> = {}): Promise<any> =>
    new Promise((resolve, reject) => {
      const id = ++next;
      waiting.set(id, (message) => {
        if (message.error) reject(new Error(`${method}: ${JSON.stringify(message.error)}`));
        else resolve(message.result ?? {});
      });
      socket.send(JSON.stringify({ id, method, params }));
    });
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error("the inspector did not answer")), 20_000)
  );
  const measure = async (): Promise<IsolateMemory> => {
    await send("Runtime.enable");
    const prototype = await send("Runtime.evaluate", {
      expression: "WebAssembly.Memory.prototype",
      contextId: await contextId,
    });
    const found = await send("Runtime.queryObjects", {
      prototypeObjectId: prototype.result.objectId,
    });
    const summed = await send("Runtime.callFunctionOn", {
      objectId: found.objects.objectId,
      functionDeclaration:
        "function () { return this.reduce((n, m) => n + m.buffer.byteLength, 0); }",
      returnByValue: true,
    });
    const usage = await send("Runtime.getHeapUsage");
    return {
      heap: usage.usedSize / 1e6,
      backing: (usage.backingStorageSize ?? NaN) / 1e6,
      wasm: summed.result.value / 1e6,
    };
  };
  try {
    return await Promise.race([measure(), timeout]);
  } finally {
    socket.close();
  }
}
