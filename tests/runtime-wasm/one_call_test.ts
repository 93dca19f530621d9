/**
 * `oneCallAtATime` (edge isolates): concurrent calls never hold more than one
 * running instance, and so one call's memory, between them. Without it each
 * waiting call holds the instance made for it: eight concurrent calls of a
 * hook that grows to 100 MiB held 800 MiB at once.
 */
import { deepStrictEqual as assertEquals, throws } from "node:assert/strict";
import type { Runtime } from "../../packages/core/runtime/types.ts";
import { createWasmRuntime } from "../../packages/runtime-wasm/mod.ts";
import { corpusRuntime, request, wasmHook } from "./_corpus.ts";

/**
 * Runs `count` calls of `hook` at once; the most instances running when one
 * is made (read as each is instantiated), and the outcomes.
 */
async function concurrently(runtime: Runtime, isolation: string, count: number) {
  const hook = wasmHook("grow_100mib", { isolation });
  const limits = { memoryMb: 128 };
  let most = 0;
  const instantiate = WebAssembly.instantiate;
  // deno-lint-ignore no-explicit-any -- the same arguments, passed on
  WebAssembly.instantiate = ((...args: any[]) => {
    most = Math.max(most, runtime.stats?.().running ?? -1);
    return (instantiate as (...a: unknown[]) => unknown)(...args);
  }) as typeof WebAssembly.instantiate;
  try {
    const results = await Promise.all(
      Array.from({ length: count }, () => runtime.run(request(hook, undefined, limits))),
    );
    const outcomes = results.map((r) => r.failure?.code ?? `exit ${r.exitCode}`);
    return { most, outcomes, after: runtime.stats?.().running };
  } finally {
    WebAssembly.instantiate = instantiate;
  }
}

for (const isolation of ["fresh", "warm"]) {
  Deno.test(`oneCallAtATime: concurrent ${isolation} calls run one instance at a time`, async () => {
    const runtime = corpusRuntime({}, { oneCallAtATime: true });
    try {
      const { most, outcomes, after } = await concurrently(runtime, isolation, 8);
      assertEquals(outcomes, Array(8).fill("exit 0"));
      assertEquals([most, after], [1, 0]);
    } finally {
      await runtime.close?.();
    }
  });
}

Deno.test("oneCallAtATime: a call that fails lets the next one run", async () => {
  const runtime = corpusRuntime({}, { oneCallAtATime: true });
  try {
    const bomb = wasmHook("memory_bomb");
    const grow = wasmHook("grow_100mib");
    const results = await Promise.all([
      runtime.run(request(bomb, undefined, { memoryMb: 4 })),
      runtime.run(request(grow, undefined, { memoryMb: 4 })),
      runtime.run(request(grow, undefined, { memoryMb: 128 })),
    ]);
    assertEquals(results.map((r) => r.failure?.code ?? `exit ${r.exitCode}`), [
      "LIMIT_MEMORY",
      "LIMIT_MEMORY",
      "exit 0",
    ]);
    assertEquals(runtime.stats?.().running, 0);
  } finally {
    await runtime.close?.();
  }
});

Deno.test("oneCallAtATime is refused with worker mode and when not a boolean", () => {
  const loadBytes = () => Promise.resolve(new Uint8Array());
  throws(
    () => createWasmRuntime({ loadBytes, worker: true, oneCallAtATime: true }),
    /oneCallAtATime, options.keptPluginBytes and options.loadedPluginBytes cannot be used with options.worker/,
  );
  throws(
    () => createWasmRuntime({ loadBytes, oneCallAtATime: "yes" as unknown as boolean }),
    /oneCallAtATime must be a boolean/,
  );
});
