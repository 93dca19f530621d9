import assert from "node:assert/strict";
import { HookboxError } from "../../packages/core/errors.ts";
import {
  inspectModule,
  instrument,
  instrumentModule,
  WRITE_BLOCK_SHIFT,
} from "../../packages/rewriter/mod.ts";
import { fixture, instantiate, wat } from "./_wat.ts";

type Fn = (...args: number[]) => number | bigint;
const PAGE = 1 << WRITE_BLOCK_SHIFT;

async function tracked(meterFuel = true) {
  const bytes = instrument(await fixture("writes.wat"), {
    memoryPages: 8,
    meterFuel,
    trackWrites: true,
  });
  const { exports } = await instantiate(bytes, { slice: 1_000_000, slices: 100 });
  const memory = new Uint8Array((exports.memory as WebAssembly.Memory).buffer);
  const map = new Uint8Array((exports.__hookbox_dirty as WebAssembly.Memory).buffer);
  /** Calls `name(...args)` on a clean map and returns its result and the pages it marked. */
  const call = (name: string, ...args: number[]) => {
    map.fill(0);
    const result = (exports[name] as Fn)(...args);
    const pages = [...map.keys()].filter((page) => map[page] !== 0);
    return { result, pages };
  };
  return { call, memory, map };
}

for (const meterFuel of [true, false]) {
  Deno.test(`\`instrument()\` trackWrites marks the page of every store kind (fuel ${meterFuel})`, async () => {
    const { call, memory } = await tracked(meterFuel);
    const cases: [string, number, number][] = [
      ["i32", 3 * PAGE + 8, 3],
      // 10 + 8200 is on page 32 (256-byte pages), not on the address's page 0
      ["offset", 10, Math.floor(8210 / PAGE)],
      ["i64_8", 5 * PAGE, 5],
      ["i64_32", 6 * PAGE + 100, 6],
      ["f32", 7 * PAGE + 4, 7],
      ["f64", 8 * PAGE, 8],
      ["v128", 9 * PAGE + 32, 9],
      ["lane", 10 * PAGE + 12, 10],
      ["atomic", 11 * PAGE + 4, 11],
      ["rmw", 12 * PAGE + 8, 12],
      ["cmpxchg", 13 * PAGE, 13],
    ];
    for (const [name, address, page] of cases) {
      assert.deepEqual(call(name, address).pages, [page], name);
    }
    const view = new DataView(memory.buffer);
    assert.equal(view.getUint32(3 * PAGE + 8, true), 0x01020304, "the store itself still happens");
    assert.equal(view.getFloat64(8 * PAGE, true), 2.5);
    assert.equal(view.getUint32(10 * PAGE + 12, true), 2, "lane 1 of the vector");
    assert.equal(call("rmw", 12 * PAGE + 8).result, 5n, "rmw returns the old value");
    assert.equal(call("cmpxchg", 13 * PAGE).result, 11, "cmpxchg returns the old value");
    assert.equal(view.getUint32(13 * PAGE, true), 11, "no swap when the value differs");
  });
}

Deno.test("`instrument()` trackWrites marks every page a bulk write covers", async () => {
  const { call, memory } = await tracked();
  assert.deepEqual(call("fill", 2 * PAGE - 1, 2 + PAGE).pages, [1, 2, 3]);
  assert.equal(memory[3 * PAGE], 0xab);
  assert.deepEqual(call("fill", 5 * PAGE, PAGE).pages, [5], "an aligned page is one page");
  assert.deepEqual(call("copy", 20 * PAGE + 10, 100).pages, [20]);
  assert.deepEqual(call("init", 30 * PAGE - 5).pages, [29, 30]);
  assert.equal(
    new TextDecoder().decode(memory.subarray(30 * PAGE - 5, 30 * PAGE + 8)),
    "passive-bytes",
  );
  assert.deepEqual(
    call("fill", 4 * PAGE + 1, 0).pages.length <= 1,
    true,
    "an empty fill marks at most one page",
  );
});

Deno.test("`instrument()` trackWrites marks stores in loops and never for loads", async () => {
  const { call } = await tracked();
  // Three stores 4096 bytes apart.
  const step = 4096 / PAGE;
  assert.deepEqual(call("loop", 40 * PAGE + 3, 3).pages, [40, 40 + step, 40 + 2 * step]);
  assert.deepEqual(call("load", 50 * PAGE).pages, []);
});

Deno.test("`instrument()` trackWrites sizes the page map for the capped memory", async () => {
  // One byte per 256-byte page of the capped memory, plus slack, in 64 KiB pages.
  const sizes: [number, number][] = [[8, 1], [4096, 17], [65535, 256]];
  for (const [memoryPages, mapPages] of sizes) {
    const info = inspectModule(
      instrument(await fixture("writes.wat"), { memoryPages, trackWrites: true }),
    );
    assert.deepEqual(info.memories[1], {
      min: mapPages,
      max: mapPages,
      imported: false,
      memory64: false,
    });
  }
});

Deno.test("`instrument()` leaves modules it cannot track untracked, and says so", () => {
  const untrackable = [
    "(module (memory 1) (memory 1))",
    "(module (memory i64 1))",
    "(module)",
  ];
  for (const text of untrackable) {
    const { bytes, report } = instrumentModule(wat(text), { memoryPages: 4, trackWrites: true });
    assert.equal(report.writesTracked, false, text);
    assert.ok(!inspectModule(bytes).exports.some((e) => e.name === "__hookbox_dirty"), text);
  }
  const whole = instrumentModule(wat("(module (memory 1))"), {
    memoryPages: 65536,
    trackWrites: true,
  });
  assert.equal(whole.report.writesTracked, false, "a 4 GiB cap is not tracked");
});

Deno.test("`instrument()` trackWrites refuses a module that names a memory it does not have", () => {
  // (module (memory 1) (func i32.const 0 i32.const 1 i32.store (memory 1))): invalid, because
  // memory 1 does not exist -- and it must stay refused although the page map is memory 1.
  const bytes = new Uint8Array([
    0,
    97,
    115,
    109,
    1,
    0,
    0,
    0, // header
    1,
    4,
    1,
    96,
    0,
    0, // type () -> ()
    3,
    2,
    1,
    0, // one function
    5,
    3,
    1,
    0,
    1, // memory 1
    10,
    13,
    1,
    11,
    0,
    65,
    0,
    65,
    1,
    54,
    0x42,
    1,
    0,
    11, // i32.store align=2|0x40 mem=1 offset=0
  ]);
  assert.throws(
    () => instrument(bytes, { memoryPages: 4, trackWrites: true }),
    (err: unknown) => err instanceof HookboxError && err.code === "PLUGIN_INVALID",
  );
});

Deno.test("`instrument()` reports whether a module can catch exceptions", () => {
  const plain = instrumentModule(wat('(module (func (export "f") nop))'), { memoryPages: 1 });
  assert.equal(plain.report.exceptionHandling, false);
  const catching = instrumentModule(
    wat(`(module (tag $t) (func (export "f") (try (do (throw $t)) (catch_all))))`),
    { memoryPages: 1 },
  );
  assert.equal(catching.report.exceptionHandling, true);
  const tryTable = instrumentModule(
    wat(`(module (func (export "f") (block $h (try_table (catch_all $h) (nop)))))`),
    { memoryPages: 1 },
  );
  assert.equal(tryTable.report.exceptionHandling, true);
});

Deno.test("`instrument()` reserves the page map export name", () => {
  assert.throws(
    () => instrument(wat(`(module (memory (export "__hookbox_dirty") 1))`), { memoryPages: 1 }),
    (err: unknown) => err instanceof HookboxError && err.code === "PLUGIN_INVALID",
  );
});
