import assert from "node:assert/strict";
import { instrument } from "../../packages/rewriter/mod.ts";
import { instantiate, OutOfFuel, wat } from "./_wat.ts";

type Fn = (...args: number[]) => number;

const FILL = wat(`(module
  (memory 4)
  (func (export "fill") (param $n i32) (memory.fill (i32.const 0) (i32.const 7) (local.get $n)))
  (func (export "copy") (param $n i32) (memory.copy (i32.const 65536) (i32.const 0) (local.get $n)))
  (func (export "fill_forever")
    (loop $l (memory.fill (i32.const 0) (i32.const 7) (i32.const 200000)) (br $l))))`);

const FILL64 = wat(`(module
  (memory i64 4)
  (func (export "fill") (param $n i64) (memory.fill (i64.const 0) (i32.const 7) (local.get $n))))`);

function spentBy(exports: WebAssembly.Exports, run: () => void): bigint {
  const fuel = exports.__hookbox_fuel as WebAssembly.Global;
  fuel.value = 10n ** 12n;
  run();
  return 10n ** 12n - (fuel.value as bigint);
}

Deno.test("`instrument()` charges memory.fill and memory.copy by their length", async () => {
  const { exports } = await instantiate(instrument(FILL, { memoryPages: 4 }));
  const small = spentBy(exports, () => (exports.fill as Fn)(16));
  const large = spentBy(exports, () => (exports.fill as Fn)(160_000));
  assert.ok(large - small >= 9_000n, `fill of 160000 bytes cost only ${large - small} more`);
  const copy = spentBy(exports, () => (exports.copy as Fn)(65_536));
  assert.ok(copy >= 4_096n, `copy of 64 KiB cost ${copy}`);
  const mem = exports.memory as WebAssembly.Memory;
  assert.equal(new Uint8Array(mem.buffer)[65_536 + 100], 7, "the copy still happened");
});

Deno.test("`instrument()` charges memory.fill on a 64-bit memory by its i64 length", async () => {
  const { exports } = await instantiate(instrument(FILL64, { memoryPages: 4 }));
  const fill = exports.fill as (n: bigint) => void;
  const small = spentBy(exports, () => fill(16n));
  const large = spentBy(exports, () => fill(160_000n));
  assert.ok(large - small >= 9_000n);
});

Deno.test("`instrument()` stops a loop of large fills through the fuel budget", async () => {
  const { exports } = await instantiate(instrument(FILL, { memoryPages: 4 }), {
    slice: 100_000,
    slices: 5,
  });
  assert.throws(() => (exports.fill_forever as Fn)(), OutOfFuel);
});

const STRAIGHT = wat(`(module
  (memory 4)
  (table $t 100 externref)
  (func (export "fills")
    (memory.fill (i32.const 0) (i32.const 1) (i32.const 200000))
    (memory.fill (i32.const 0) (i32.const 2) (i32.const 200000))
    (memory.fill (i32.const 0) (i32.const 3) (i32.const 200000)))
  (func (export "grows") (result i32)
    (drop (table.grow $t (ref.null extern) (i32.const 50000)))
    (table.size $t)))`);

Deno.test("`instrument()` checks a bulk charge before the operation runs, even in straight-line code", async () => {
  const { exports } = await instantiate(instrument(STRAIGHT, { memoryPages: 4 }), { slices: 0 });
  const fuel = exports.__hookbox_fuel as WebAssembly.Global;
  const memory = new Uint8Array((exports.memory as WebAssembly.Memory).buffer);
  // Enough for the first fill (12,500 units plus its flat cost), not the second.
  fuel.value = 20_000n;
  assert.throws(() => (exports.fills as Fn)(), OutOfFuel);
  assert.equal(memory[0], 1, "the first fill ran, the second never started");
});

Deno.test("`instrument()` charges table.grow by its delta and checks it first", async () => {
  const { exports } = await instantiate(instrument(STRAIGHT, { memoryPages: 4 }), { slices: 0 });
  const fuel = exports.__hookbox_fuel as WebAssembly.Global;
  fuel.value = 10_000n;
  assert.throws(() => (exports.grows as Fn)(), OutOfFuel);
  fuel.value = 10n ** 9n;
  assert.equal((exports.grows as Fn)(), 50_100, "the grow ran once, on the second call");
  assert.ok(10n ** 9n - (fuel.value as bigint) >= 50_000n, "one unit per element");
});
