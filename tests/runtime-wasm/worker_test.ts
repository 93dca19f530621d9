/**
 * Worker mode: the same results as the foreground runtime, the same limits,
 * and a worker that stops answering is terminated at the deadline while the
 * next calls are served by a fresh worker.
 */
import { deepStrictEqual as assertEquals, ok, throws } from "node:assert/strict";
import type { EffectiveLimits, RunRequest } from "../../packages/core/runtime/types.ts";
import { createExecutor } from "../../packages/hookbox/deno.ts";
import { createWasmRuntime } from "../../packages/runtime-wasm/mod.ts";
import { WorkerRuntime } from "../../packages/runtime-wasm/worker/_worker_runtime.ts";
import { tempTree } from "../_helpers.ts";
import { toolCall, writePluginHook } from "../integration/_plugins.ts";
import { corpus, corpusRuntime, request, shellEvent, wasmHook, withoutFuel } from "./_corpus.ts";
import { runFailure } from "../../packages/core/runtime/failure.ts";

const STALL_ENTRY = new URL("./_stall_worker.ts", import.meta.url);

/**
 * A worker runtime on the corpus whose workers stall on events containing
 * "STALL"; `onRun` is called when a call has been handed to a worker.
 */
function stallRuntime(onRun: () => void = () => {}): WorkerRuntime {
  const loadBytes = (hook: { entry: { runtime: string; path?: string } }) =>
    corpus(hook.entry.path!.replace(/^.*\//, "").replace(/\.wasm$/, ""));
  const onDispatch = (type: string) => type === "run" && onRun();
  return new WorkerRuntime({ loadBytes, entry: STALL_ENTRY, onDispatch });
}

const BENIGN: [string, unknown][] = [
  ["guard_wasi", shellEvent("ls -la")],
  ["guard_wasi", shellEvent("rm -rf /")],
  ["guard_extism", shellEvent("ls -la")],
  ["guard_extism", shellEvent("rm -rf /")],
  ["rewrite_wasi", shellEvent("rm -rf /")],
  ["rewrite_extism", shellEvent("rm -rf /")],
  ["block_wasi", shellEvent("ls")],
  ["block_extism", shellEvent("ls")],
  ["state_counter", shellEvent("ls")],
];

for (const isolation of ["fresh", "warm"]) {
  Deno.test(`worker mode gives the foreground results for benign plugins (${isolation})`, async () => {
    const foreground = corpusRuntime();
    const worker = corpusRuntime({}, { worker: true });
    for (const [name, event] of BENIGN) {
      const hook = wasmHook(name, { isolation });
      for (let i = 0; i < 2; i++) {
        const expected = await foreground.run(request(hook, event));
        assertEquals(await worker.run(request(hook, event)), expected, `${name} call ${i}`);
      }
    }
    await foreground.close?.();
    await worker.close?.();
  });
}

const LIMITED: [string, Partial<EffectiveLimits>][] = [
  ["loop_forever", {}],
  ["loop_forever_extism", {}],
  ["loop_forever", { fuel: 1e12, timeoutMs: 200 }],
  ["memory_bomb", { memoryMb: 4 }],
  ["alloc_bomb_extism", { memoryMb: 64 }],
  ["stack_bomb", {}],
  ["output_flood", { outputKb: 256 }],
  ["trap_unreachable", {}],
  ["bad_import", {}],
];

for (const [name, limits] of LIMITED) {
  Deno.test(`worker mode enforces ${name} ${JSON.stringify(limits)} like the foreground`, async () => {
    const foreground = corpusRuntime();
    const worker = corpusRuntime({}, { worker: true });
    const hook = wasmHook(name);
    const expected = await foreground.run(request(hook, undefined, limits));
    ok(expected.failure !== undefined);
    // Fuel used before a deadline varies with the machine; everything else is the same.
    assertEquals(
      withoutFuel(await worker.run(request(hook, undefined, limits))),
      withoutFuel(expected),
    );
    const guard = wasmHook("guard_extism", { isolation: "warm" });
    const next = await worker.run(request(guard, shellEvent("rm -rf /")));
    assertEquals(withoutFuel(next), { exitCode: 2, stdout: "", stderr: "rm -rf is not allowed" });
    await foreground.close?.();
    await worker.close?.();
  });
}

Deno.test("worker mode terminates a stalled first call at the deadline and serves the next call", async () => {
  const runtime = stallRuntime();
  const hook = wasmHook("guard_wasi", { isolation: "warm" });
  const limits = { ...request(hook).limits, timeoutMs: 150 };
  const stalled = await runtime.run(request(hook, shellEvent("STALL"), limits));
  assertEquals(stalled, {
    exitCode: null,
    stdout: "",
    stderr: "",
    failure: runFailure("TIMEOUT"),
  });
  const next = await runtime.run(request(hook, shellEvent("rm -rf /"), limits));
  assertEquals(withoutFuel(next), { exitCode: 2, stdout: "", stderr: "rm -rf is not allowed" });
  assertEquals(runtime.workersStarted, 2);
  await runtime.close();
});

Deno.test("worker mode: calls queued behind a stalled call are served by the next worker", async () => {
  const runtime = stallRuntime();
  const hook = wasmHook("guard_extism");
  const limits = { timeoutMs: 150 };
  // The queued calls get time to spare: on a loaded machine starting the next
  // worker and running them may take longer than the stalled call's 150 ms.
  const roomy = { timeoutMs: 10_000 };
  assertEquals(await runtime.prepare(hook, request(hook, undefined, limits).limits), null);
  const results = await Promise.all([
    runtime.run(request(hook, shellEvent("STALL"), limits)),
    runtime.run(request(hook, shellEvent("rm -rf /"), roomy)),
    runtime.run(request(hook, shellEvent("ls"), roomy)),
  ]);
  assertEquals(results.map((r) => r.failure?.detail ?? r.exitCode), ["time", 2, 0]);
  await runtime.close();
});

Deno.test("worker mode: close() ends running and queued calls with aborted", async () => {
  const dispatched = Promise.withResolvers<void>();
  const runtime = stallRuntime(dispatched.resolve);
  const hook = wasmHook("guard_wasi");
  assertEquals(await runtime.prepare(hook, request(hook).limits), null);
  const running = runtime.run(request(hook, shellEvent("STALL")));
  await dispatched.promise;
  const queued = runtime.run(request(hook, shellEvent("ls")));
  await runtime.close();
  const aborted = runFailure("ABORTED");
  assertEquals((await running).failure, aborted);
  assertEquals((await queued).failure, aborted);
});

Deno.test("worker mode: the request's signal terminates a stalled call", async () => {
  const controller = new AbortController();
  const runtime = stallRuntime(() => controller.abort());
  const hook = wasmHook("guard_wasi");
  assertEquals(await runtime.prepare(hook, request(hook).limits), null);
  const call: RunRequest = request(hook, shellEvent("STALL"), {}, { signal: controller.signal });
  const running = runtime.run(call);
  assertEquals((await running).failure, runFailure("ABORTED"));
  const next = await runtime.run(request(hook, shellEvent("ls")));
  assertEquals(next.exitCode, 0);
  assertEquals(runtime.workersStarted, 2);
  await runtime.close();
});

Deno.test("worker mode: a pool of two workers serves concurrent calls", async () => {
  const runtime = corpusRuntime({}, { worker: true, workers: 2 });
  const hook = wasmHook("guard_extism", { isolation: "warm" });
  const events = ["ls", "rm -rf /", "echo", "rm -rf ~", "pwd", "cat"];
  const results = await Promise.all(events.map((c) => runtime.run(request(hook, shellEvent(c)))));
  assertEquals(results.map((r) => r.exitCode), [0, 2, 0, 2, 0, 0]);
  await runtime.close?.();
});

Deno.test("worker mode reports load failures like the foreground", async () => {
  const runtime = corpusRuntime({ garbage: new Uint8Array([1, 2, 3]) }, { worker: true });
  const hook = wasmHook("garbage");
  const failure = await runtime.prepare?.(hook, request(hook).limits);
  ok(failure?.detail.startsWith("invalid module:"), failure?.detail);
  assertEquals((await runtime.run(request(hook))).failure, failure);
  await runtime.close?.();
});

Deno.test("createWasmRuntime() rejects bad worker options", () => {
  const loadBytes = () => Promise.resolve(new Uint8Array());
  const compile = (b: Uint8Array) => WebAssembly.compile(b as Uint8Array<ArrayBuffer>);
  throws(() => createWasmRuntime({ loadBytes, worker: true, compile }), TypeError);
  throws(() => createWasmRuntime({ loadBytes, worker: true, workers: 0 }), TypeError);
  throws(() => createWasmRuntime({ loadBytes, meterFuel: "no" as unknown as boolean }), TypeError);
});

Deno.test("createExecutor({ wasmWorker: true }) runs WebAssembly hooks in a worker", async () => {
  await using tree = await tempTree();
  const dir = await tree.dir("hooks");
  await writePluginHook(dir, "guard", await corpus("guard_extism"), { isolation: "warm" });
  const executor = createExecutor({ projectDir: dir, userDir: null, wasmWorker: true });
  try {
    const blocked = await executor.dispatch(toolCall("rm -rf /"));
    assertEquals([blocked.decision, blocked.reason], ["block", "rm -rf is not allowed"]);
    assertEquals((await executor.dispatch(toolCall("ls"))).decision, "allow");
  } finally {
    await executor.close();
  }
  throws(() => createExecutor({ wasmWorker: "yes" as unknown as boolean }), TypeError);
});

/**
 * A two-worker runtime on the corpus; `handedOver(n)` resolves once `n` calls
 * in all have been handed to a worker.
 */
/**
 * Two workers; `handedOver(n)` resolves once n calls went to a worker, and
 * `tenants` lists whose call each was, in the order the pool chose them
 * (which no scheduling of the worker threads can reorder).
 */
function countingRuntime(): {
  runtime: WorkerRuntime;
  handedOver: (n: number) => Promise<void>;
  tenants: string[];
} {
  const tenants: string[] = [];
  const waiting: { n: number; resolve: () => void }[] = [];
  const runtime = new WorkerRuntime({
    loadBytes: (hook) =>
      corpus(hook.entry.runtime === "wasm" ? hook.entry.path.replace(/^.*\/|\.wasm$/g, "") : ""),
    workers: 2,
    onDispatch: (type, tenantId) => {
      if (type !== "run") return;
      tenants.push(tenantId);
      for (const w of waiting.filter((w) => w.n <= tenants.length)) w.resolve();
    },
  });
  const handedOver = (n: number) =>
    n <= tenants.length
      ? Promise.resolve()
      : new Promise<void>((resolve) => waiting.push({ n, resolve }));
  return { runtime, handedOver, tenants };
}

Deno.test("worker mode shares the workers fairly: a tenant at its limits does not queue others behind it", async () => {
  const { runtime, handedOver, tenants } = countingRuntime();
  const done: string[] = [];
  const loop = wasmHook("loop_forever");
  const guard = wasmHook("guard_wasi");
  // Warm both workers up so loading does not blur the order.
  await Promise.all([0, 1].map(() => runtime.run(request(guard, shellEvent("ls")))));
  const hostile = Array.from(
    { length: 6 },
    (_, i) =>
      runtime.run(request(loop, undefined, { fuel: 1e12, timeoutMs: 300 }, { tenantId: "hostile" }))
        .then((r) => done.push(`hostile-${i}:${r.failure?.code}`)),
  );
  await handedOver(4); // both workers are busy with the hostile tenant
  const good = runtime.run(request(guard, shellEvent("ls"), {}, { tenantId: "good" }))
    .then((r) => done.push(`good:${r.exitCode}`));
  await Promise.all([...hostile, good]);
  await runtime.close?.();
  const at = done.indexOf("good:0");
  assertEquals(
    done.filter((d) => d.startsWith("hostile")).every((d) => d.endsWith("TIMEOUT")),
    true,
  );
  ok(at >= 0, done.join(", "));
  // FIFO would run all six hostile calls first; fair sharing hands the good call
  // to the first worker that frees up, after the two that were running. (Which
  // call ends first is left to the threads: a starved worker may finish the
  // good call after a hostile one has timed out on the clock.)
  assertEquals(tenants.slice(2), ["hostile", "hostile", "good", ...Array(4).fill("hostile")]);
});

Deno.test("worker mode keeps a worker free for other tenants while several are active", async () => {
  const { runtime, handedOver, tenants } = countingRuntime();
  const guard = wasmHook("guard_wasi");
  const loop = wasmHook("loop_forever");
  const hostileRun = (timeoutMs: number) =>
    runtime.run(request(loop, undefined, { fuel: 1e12, timeoutMs }, { tenantId: "hostile" }));
  // Both tenants are active and both workers have loaded both hooks.
  await Promise.all([hostileRun(50), hostileRun(50)]);
  await Promise.all([
    runtime.run(request(guard, shellEvent("ls"), {}, { tenantId: "good" })),
    runtime.run(request(guard, shellEvent("ls"), {}, { tenantId: "good" })),
  ]);
  const done: string[] = [];
  const hostile = Array.from(
    { length: 4 },
    (_, i) => hostileRun(400).then(() => done.push(`hostile-${i}`)),
  );
  await handedOver(5);
  // The hostile tenant holds one worker of two, not both: the good call runs at once.
  const good = runtime.run(request(guard, shellEvent("ls"), {}, { tenantId: "good" }))
    .then((r) => done.push(`good:${r.exitCode}`));
  await Promise.all([...hostile, good]);
  await runtime.close?.();
  // Handed to the free worker before any hostile call waiting for one.
  assertEquals(tenants.slice(4, 6), ["hostile", "good"], tenants.join(", "));
  ok(done.includes("good:0"), done.join(", "));
});

/** Nice values of this process's threads (Linux: field 19 of /proc/self/task/TID/stat). */
function threadNices(): number[] {
  const nices: number[] = [];
  for (const entry of Deno.readDirSync("/proc/self/task")) {
    try {
      const stat = Deno.readTextFileSync(`/proc/self/task/${entry.name}/stat`);
      nices.push(Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]));
    } catch {
      // The thread ended while we looked.
    }
  }
  return nices;
}

Deno.test({
  name: "worker mode runs plugins on threads that yield to the one answering requests",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const runtime = corpusRuntime({}, { worker: true, workers: 2 });
    try {
      const hook = wasmHook("guard_wasi");
      const denied = await runtime.run(request(hook, shellEvent("rm -rf /")));
      ok(denied.failure === undefined, JSON.stringify(denied.failure));
      let lowered = threadNices().filter((nice) => nice === 10).length;
      for (let tries = 0; tries < 100 && lowered === 0; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        lowered = threadNices().filter((nice) => nice === 10).length;
      }
      ok(lowered >= 1, `a plugin thread at nice 10 (threads: ${threadNices().join(" ")})`);
      ok(threadNices().includes(0), "this thread keeps its priority");
    } finally {
      await runtime.close?.();
    }
  },
});

Deno.test("worker mode with startWorkers starts the pool at once, and the first call finds it ready", async () => {
  const runtime = createWasmRuntime({
    loadBytes: (hook) =>
      corpus(hook.entry.runtime === "wasm" ? hook.entry.path.replace(/^.*\/|\.wasm$/g, "") : ""),
    worker: true,
    workers: 2,
    startWorkers: true,
  }) as WorkerRuntime;
  try {
    assertEquals(runtime.workersStarted, 2, "both workers started before any call");
    const result = await runtime.run(request(wasmHook("guard_wasi"), shellEvent("rm -rf /")));
    assertEquals(result.exitCode, 2);
    assertEquals(runtime.workersStarted, 2, "the call was served by a started worker");
  } finally {
    await runtime.close();
  }
  throws(
    () =>
      createWasmRuntime({ loadBytes: () => corpus(""), worker: true, startWorkers: 1 as never }),
    TypeError,
  );
});

Deno.test("worker mode: a worker thread that cannot start fails the waiting calls, and the next call starts one", async () => {
  const loadBytes = (hook: { entry: { runtime: string; path?: string } }) =>
    corpus(hook.entry.path!.replace(/^.*\//, "").replace(/\.wasm$/, ""));
  let refuse = true;
  const runtime = createWasmRuntime({
    loadBytes,
    worker: true,
    // What host-deno's startModuleWorker does when the process is out of file descriptors.
    startWorker: (url) => {
      if (refuse) throw new Error("Too many open files (os error 24): no file descriptors left");
      return new Worker(url, { type: "module" });
    },
  });
  const hook = wasmHook("guard_wasi");
  const failed = await runtime.run(request(hook, shellEvent("rm -rf /")));
  assertEquals(failed.failure?.code, "WORKER_FAILED");
  const why = failed.failure?.message ?? "";
  ok(/could not start: Too many open files/.test(why), why);
  refuse = false;
  const next = await runtime.run(request(hook, shellEvent("rm -rf /")));
  assertEquals(withoutFuel(next), { exitCode: 2, stdout: "", stderr: "rm -rf is not allowed" });
  await runtime.close?.();
});
