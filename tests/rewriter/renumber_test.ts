import assert from "node:assert/strict";
import { instrument } from "../../packages/rewriter/mod.ts";
import { fixture, instantiate } from "./_wat.ts";

type Fn = (...args: number[]) => number;

const env = { add: (a: number, b: number) => a + b, seed: 7 };

async function results(bytes: Uint8Array<ArrayBuffer>): Promise<number[]> {
  const { exports } = await instantiate(bytes, {
    slice: 1_000_000,
    slices: 100,
    imports: { env },
  });
  const call = (name: string, ...args: number[]) => (exports[name] as Fn)(...args);
  return [
    call("dispatch", 0, 3, 4),
    call("dispatch", 1, 3, 4),
    call("dispatch", 2, 3, 4),
    call("passive", 9, 2),
    call("viaref", 5, 6),
    call("twice", 21),
    call("pairsum", 8),
    call("counter"),
  ];
}

Deno.test("`instrument()` renumbers every function index after adding imports", async () => {
  const plain = await fixture("indices.wat");
  const expected = await results(plain);
  assert.deepEqual(expected, [7, 12, -1, 18, 30, 42, 16, 7]);
  for (const maxCallDepth of [undefined, 100]) {
    const bytes = instrument(plain, {
      memoryPages: 1,
      initialFuel: 10_000,
      ...(maxCallDepth ? { maxCallDepth } : {}),
    });
    assert.ok(WebAssembly.validate(bytes));
    assert.deepEqual(await results(bytes), expected);
  }
});

Deno.test("`instrument()` meters the start function with initialFuel", async () => {
  const bytes = instrument(await fixture("indices.wat"), { memoryPages: 1 });
  await assert.rejects(() => instantiate(bytes, { imports: { env } }), /out of fuel/);
});

Deno.test("`instrument()` maxCallDepth stops deep recursion through the host import", async () => {
  const bytes = instrument(await fixture("recursion.wat"), {
    memoryPages: 1,
    meterFuel: false,
    maxCallDepth: 500,
  });
  const { exports } = await instantiate(bytes);
  assert.throws(() => (exports.forever as Fn)(0), /hookbox stack exhausted/);
  const depth = exports.__hookbox_depth as WebAssembly.Global;
  assert.equal(depth.value, 501, "the host resets __hookbox_depth after a trap");
  depth.value = 0;
  assert.equal((exports.fib as Fn)(15), 610);
  assert.equal(depth.value, 0, "every return decrements the counter");
});
