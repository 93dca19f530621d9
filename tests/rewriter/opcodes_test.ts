import assert from "node:assert/strict";
import { instrument } from "../../packages/rewriter/mod.ts";
import { fixture, instantiate } from "./_wat.ts";

const NAMES = ["simd", "lanes", "bulk", "signext", "sat", "refs", "multi", "exceptions", "tail"];

async function results(bytes: Uint8Array<ArrayBuffer>): Promise<number[]> {
  const { exports } = await instantiate(bytes, { slice: 10_000_000, slices: 10 });
  return NAMES.map((name) => (exports[name] as () => number)());
}

Deno.test("`instrument()` decodes post-MVP instructions and keeps their results", async () => {
  const plain = await fixture("opcodes.wat");
  const expected = await results(plain);
  assert.deepEqual(expected, [4, 0, 0x08070909, -3, 2147483647, 103, 42, 42, 200000]);
  for (const maxCallDepth of [undefined, 50]) {
    const bytes = instrument(plain, {
      memoryPages: 1,
      signalGrowFailure: maxCallDepth !== undefined,
      ...(maxCallDepth ? { maxCallDepth } : {}),
    });
    assert.deepEqual(await results(bytes), expected);
  }
});
