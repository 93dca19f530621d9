import assert from "node:assert/strict";
import { inspectModule, instrument } from "../../packages/rewriter/mod.ts";
import { fixture, instantiate } from "./_wat.ts";

type Fn = (...args: number[]) => number;

Deno.test("`instrument()` signalGrowFailure calls grow_failed when memory.grow fails", async () => {
  const bytes = instrument(await fixture("memory_grow.wat"), {
    memoryPages: 4,
    signalGrowFailure: true,
  });
  const { exports, growFailures } = await instantiate(bytes, { slice: 1_000_000, slices: 10 });
  const grow = exports.grow as Fn;
  assert.equal(grow(2), 1);
  assert.equal(growFailures(), 0, "a grow within the cap is not reported");
  assert.equal(grow(2), -1, "the guest still sees -1 and keeps running");
  assert.equal(growFailures(), 1);
  assert.equal(grow(1), 3);
  assert.equal(grow(1), -1);
  assert.equal(growFailures(), 2);
  assert.equal((exports.size as Fn)(), 4);
});

Deno.test("`instrument()` signalGrowFailure covers every memory, 64-bit ones and loops", async () => {
  const plain = await fixture("memory_grow_multi.wat");
  for (const meterFuel of [true, false]) {
    // The cap is for both memories together: each gets an even share (3 pages).
    const bytes = instrument(plain, { memoryPages: 6, meterFuel, signalGrowFailure: true });
    const { exports, growFailures } = await instantiate(bytes, { slice: 1_000_000, slices: 10 });
    assert.equal((exports.grow64 as (n: bigint) => bigint)(2n), 1n);
    assert.equal((exports.grow64 as (n: bigint) => bigint)(1n), -1n);
    assert.equal(growFailures(), 1);
    assert.equal((exports.fill as Fn)(), 2, "two pages fit in its share of 3");
    assert.equal(growFailures(), 2, "the loop's final failed grow is reported once");
    assert.equal((exports.grow as Fn)(0), 3);
  }
});

Deno.test("`instrument()` adds grow_failed after the other hookbox imports", async () => {
  const bytes = instrument(await fixture("memory_grow.wat"), {
    memoryPages: 4,
    maxCallDepth: 100,
    signalGrowFailure: true,
  });
  const names = inspectModule(bytes).imports.map((i) => `${i.module}.${i.name}`);
  assert.deepEqual(names, [
    "hookbox.out_of_fuel",
    "hookbox.stack_exhausted",
    "hookbox.grow_failed",
  ]);
});

Deno.test("`instrument()` adds no grow_failed import without a memory or the option", async () => {
  const noMemory = instrument(await fixture("recursion.wat"), {
    memoryPages: 1,
    signalGrowFailure: true,
  });
  const off = instrument(await fixture("memory_grow.wat"), { memoryPages: 4 });
  for (const bytes of [noMemory, off]) {
    const names = inspectModule(bytes).imports.map((i) => i.name);
    assert.ok(!names.includes("grow_failed"), names.join(", "));
  }
});
