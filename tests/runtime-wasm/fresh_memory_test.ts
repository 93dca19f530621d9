/**
 * Fresh instances of a plugin that imports its memory reuse zeroed memories
 * (`_memories.ts`), and still start every call as a new instance would: what
 * one call wrote is gone for the next, and a memory that grew is not reused.
 */
import { deepStrictEqual as assertEquals, notStrictEqual, strictEqual } from "node:assert/strict";
import { MAX_POOLED_MEMORY, MemoryPool } from "../../packages/runtime-wasm/instance/_memories.ts";
import type { LoadedPlugin } from "../../packages/runtime-wasm/_loader.ts";
import { corpusRuntime, request, wasmHook } from "./_corpus.ts";

/** Six fresh calls of corpus plugin `name`, for two tenants in turn: each must print `stdout`. */
async function freshCalls(name: string, stdout: string): Promise<void> {
  const runtime = corpusRuntime();
  try {
    const hook = wasmHook(name, { isolation: "fresh" });
    for (let i = 0; i < 6; i++) {
      const result = await runtime.run({ ...request(hook), tenantId: i % 2 ? "a" : "b" });
      assertEquals(
        [result.exitCode, result.stdout, result.failure],
        [0, stdout, undefined],
        `${i}`,
      );
    }
  } finally {
    await runtime.close?.();
  }
}

Deno.test("fresh calls of a memory-importing plugin never see an earlier call's writes", async () => {
  // state_counter increments a counter kept in memory (and a global) and prints both digits:
  // a reused memory that was not cleared would print "12", "13", ...
  await freshCalls("state_counter", "11");
});

Deno.test("fresh calls see their data segments and zeros elsewhere after a call dirtied it all", async () => {
  // fresh_data_probe traps unless it finds "AB" at 100, "CD" at 300 and zeros around them, then
  // fills its whole page with 9s: a reused memory zeroed wrongly in or out of the segments fails.
  await freshCalls("fresh_data_probe", "ok");
});

Deno.test("MemoryPool zeroes a given-back memory outside the plugin's data ranges only", () => {
  const pool = new MemoryPool(1 << 20);
  const loaded = {
    memoryImport: { min: 1, max: 1 },
    dataRanges: [[100, 102], [300, 302], [65530, 65536]],
  } as unknown as LoadedPlugin;
  const memory = pool.take(loaded);
  new Uint8Array(memory.buffer).fill(9);
  pool.give(loaded, memory);
  const bytes = new Uint8Array(pool.take(loaded).buffer);
  const nines = bytes.reduce<number[]>((at, b, i) => (b === 9 ? [...at, i] : at), []);
  // The bytes the next instantiation writes over are left; every other byte is zero.
  assertEquals(nines, [100, 101, 300, 301, 65530, 65531, 65532, 65533, 65534, 65535]);
});

Deno.test("MemoryPool gives back zeroed memories of the initial size only, a few per plugin", () => {
  const pool = new MemoryPool(1 << 20);
  const loaded = { memoryImport: { min: 1, max: 4 } } as LoadedPlugin;
  const first = pool.take(loaded);
  new Uint8Array(first.buffer).fill(7, 0, 1024);
  pool.give(loaded, first);
  const again = pool.take(loaded);
  strictEqual(again, first, "the memory is reused");
  assertEquals(new Uint8Array(again.buffer).some((b) => b !== 0), false, "and was zeroed");
  again.grow(1);
  pool.give(loaded, again);
  notStrictEqual(pool.take(loaded), again, "a memory that grew is not reused");
  const many = Array.from({ length: 6 }, () => pool.take(loaded));
  for (const m of many) pool.give(loaded, m);
  const kept = new Set(Array.from({ length: 6 }, () => pool.take(loaded)));
  assertEquals(many.filter((m) => kept.has(m)).length, 4, "at most four are kept");
  const other = { memoryImport: { min: 1, max: 4 } } as LoadedPlugin;
  notStrictEqual(pool.take(other), many[0], "memories are never shared across plugins");
});

Deno.test("MemoryPool keeps no more than its bytes, and no memory over MAX_POOLED_MEMORY", () => {
  const pool = new MemoryPool(3 * 65536);
  const plugins = Array.from(
    { length: 4 },
    () => ({ memoryImport: { min: 1, max: 1 } }) as LoadedPlugin,
  );
  const memories = plugins.map((p) => pool.take(p));
  plugins.forEach((p, i) => pool.give(p, memories[i]!));
  assertEquals(pool.bytes, 3 * 65536, "the cap holds");
  notStrictEqual(pool.take(plugins[0]!), memories[0], "the least recently given went first");
  strictEqual(pool.take(plugins[3]!), memories[3]);
  // A memory over the size limit is never kept (zeroing it would cost the thread seconds).
  const pages = MAX_POOLED_MEMORY / 65536 + 1;
  const big = { memoryImport: { min: pages, max: pages } } as LoadedPlugin;
  const wide = new MemoryPool(1 << 30);
  const memory = wide.take(big);
  wide.give(big, memory);
  assertEquals(wide.bytes, 0);
  // And a runtime that keeps nothing warm pools nothing.
  const none = new MemoryPool(0);
  const small = none.take(plugins[0]!);
  none.give(plugins[0]!, small);
  assertEquals(none.bytes, 0);
});

Deno.test("a fresh instance's _initialize sees the environment of the call it serves", async () => {
  const runtime = corpusRuntime();
  try {
    const hook = wasmHook("init_env_probe", { isolation: "fresh", env: ["MODE"] });
    const envs = [{}, { MODE: "a" }, { MODE: "a" }, {}, {}, { MODE: "b" }];
    for (const [i, env] of envs.entries()) {
      const result = await runtime.run({ ...request(hook), env });
      const n = Object.keys(env).length;
      assertEquals([result.exitCode, result.stdout], [0, `${n}${n}`], `call ${i}`);
    }
  } finally {
    await runtime.close?.();
  }
});
