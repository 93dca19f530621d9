import assert from "node:assert/strict";
import { instrument, instrumentModule, MAX_DATA_RANGES } from "../../packages/rewriter/mod.ts";
import { MAX_GAP, ZERO_ALLOWANCE } from "../../packages/rewriter/encode/_data.ts";
import { parseModule } from "../../packages/rewriter/decode/_parse.ts";
import { Reader } from "../../packages/rewriter/decode/_reader.ts";
import { SECTION } from "../../packages/rewriter/decode/_module.ts";
import { instantiate, wat } from "./_wat.ts";

type Fn = (...args: number[]) => number;
const FUEL = { slice: 1_000_000, slices: 100 };

/** The data section's segments: offset (null when passive) and length. */
function segments(bytes: Uint8Array): { offset: number | null; length: number }[] {
  const m = parseModule(bytes);
  const s = m.sections.find((s) => s.id === SECTION.data)!;
  const r = new Reader(bytes, s.start, s.end);
  const out = [];
  for (let n = r.u32(); n > 0; n--) {
    const flags = r.u32();
    let offset: number | null = null;
    if (flags !== 1) {
      assert.equal(r.u8(), 0x41);
      offset = r.signed(32);
      assert.equal(r.u8(), 0x0b);
    }
    const length = r.u32();
    r.take(length);
    out.push({ offset, length });
  }
  return out;
}

/** `bytes` with a data count section of `count` inserted before the code section. */
function withDataCount(bytes: Uint8Array, count: number): Uint8Array<ArrayBuffer> {
  const code = parseModule(bytes).sections.find((s) => s.id === SECTION.code)!;
  // The section's start is its payload; its id and size come just before.
  let at = code.start - 1;
  while (bytes[at - 1]! & 0x80) at--;
  at--;
  const out = new Uint8Array(bytes.length + 3);
  out.set(bytes.subarray(0, at));
  out.set([SECTION.dataCount, 1, count], at);
  out.set(bytes.subarray(at), at + 3);
  return out;
}

function dataSectionBytes(bytes: Uint8Array): number {
  const s = parseModule(bytes).sections.find((s) => s.id === SECTION.data)!;
  return s.end - s.start;
}

async function memoryOf(bytes: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  const { exports } = await instantiate(bytes, FUEL);
  return new Uint8Array((exports.memory as WebAssembly.Memory).buffer);
}

Deno.test("instrumenting joins nearby data segments; the memory the module starts with is the same", async () => {
  const source = wat(`(module (memory (export "memory") 1)
    (data (i32.const 0) "ab")
    (data (i32.const 10) "cd")
    (data (i32.const 70) "ef")
    (data (i32.const 200) "g")
    (data (i32.const 203) "hi"))`);
  const out = instrument(source, { memoryPages: 1 });
  assert.deepEqual(segments(out), [
    { offset: 0, length: 72 }, // 0, 10 and 70: gaps of 8 and 58 bytes
    { offset: null, length: 0 },
    { offset: null, length: 0 },
    { offset: 200, length: 5 }, // 128 bytes after the last: a new segment, then a gap of 2
    { offset: null, length: 0 },
  ]);
  assert.deepEqual(await memoryOf(out), await memoryOf(source));
});

Deno.test("an imported memory's report names the ranges instantiation writes, joined or not", () => {
  const joined = wat(`(module (memory (export "memory") 1)
    (data (i32.const 0) "ab")
    (data (i32.const 10) "cd")
    (data (i32.const 200) "g")
    (data (i32.const 203) "hi"))`);
  const { report } = instrumentModule(joined, { memoryPages: 1, importMemory: true });
  assert.deepEqual(report.dataRanges, [[0, 12], [200, 205]]); // the gaps joined are written too
  const apart = wat(`(module (memory (export "memory") 1)
    (data (i32.const 300) "x") (data (i32.const 100) "yz") (data (i32.const 101) "w"))`);
  // Out of order (left alone): the segments' own ranges, sorted, overlaps merged.
  const left = instrumentModule(apart, { memoryPages: 1, importMemory: true }).report;
  assert.deepEqual(left.dataRanges, [[100, 102], [300, 301]]);
  const computed = wat(`(module (memory (export "memory") 1) (global i32 (i32.const 8))
    (data (global.get 0) "ab"))`);
  const unknown = instrumentModule(computed, { memoryPages: 1, importMemory: true }).report;
  assert.equal(unknown.dataRanges, null, "a computed offset: unknown, the host zeroes everything");
  const scattered = wat(
    `(module (memory (export "memory") 1) ${
      Array.from({ length: MAX_DATA_RANGES + 1 }, (_, i) => `(data (i32.const ${i * 200}) "x")`)
        .join(" ")
    })`,
  );
  const many = instrumentModule(scattered, { memoryPages: 1, importMemory: true }).report;
  assert.equal(many.dataRanges, null, "too many ranges to skip one by one: the host zeroes all");
  const own = instrumentModule(joined, { memoryPages: 1 }).report;
  assert.equal(own.dataRanges, null, "only reported for an imported memory");
});

Deno.test("with no code naming a segment, folded segments are left out and the data count follows", async () => {
  const source = wat(`(module (memory (export "memory") 1)
    (data (i32.const 0) "ab")
    (data (i32.const 4) "cd")
    (data (i32.const 9) "ef")
    (data "xyz")
    (func (export "f") (result i32) (i32.const 1)))`);
  const out = instrument(source, { memoryPages: 1 });
  assert.deepEqual(segments(out), [{ offset: 0, length: 11 }, { offset: null, length: 3 }]);
  assert.deepEqual(await memoryOf(out), await memoryOf(source));
  // A data count section (allowed without bulk-memory code) follows the new count.
  const counted = withDataCount(source, 4);
  assert.ok(WebAssembly.validate(counted));
  const recount = instrument(counted, { memoryPages: 1 });
  assert.equal(segments(recount).length, 2);
  assert.deepEqual(await memoryOf(recount), await memoryOf(source));
  // Not rewriting the code, the rewriter cannot know: every index is kept.
  const unmetered = instrument(source, { memoryPages: 1, meterFuel: false });
  assert.equal(segments(unmetered).length, 4);
});

Deno.test("a folded segment's index behaves as before for memory.init and data.drop", async () => {
  const source = wat(`(module (memory (export "memory") 1)
    (data (i32.const 0) "ab")
    (data (i32.const 4) "cd")
    (data "xyz")
    (func (export "init_folded") (param $n i32)
      (memory.init 1 (i32.const 100) (i32.const 0) (local.get $n)))
    (func (export "init_passive") (param $n i32)
      (memory.init 2 (i32.const 200) (i32.const 0) (local.get $n)))
    (func (export "drop_folded") (data.drop 1)))`);
  const out = instrument(source, { memoryPages: 1 });
  assert.equal(segments(out).filter((s) => s.offset !== null).length, 1, "the two were joined");
  assert.equal(segments(out).length, 3, "every index kept");
  for (const bytes of [source, out]) {
    const { exports } = await instantiate(bytes, FUEL);
    const memory = new Uint8Array((exports.memory as WebAssembly.Memory).buffer);
    (exports.init_folded as Fn)(0); // an applied active segment is empty: 0 bytes is fine
    assert.throws(() => (exports.init_folded as Fn)(1), WebAssembly.RuntimeError);
    (exports.init_passive as Fn)(3);
    assert.equal(new TextDecoder().decode(memory.subarray(200, 203)), "xyz");
    (exports.drop_folded as Fn)();
    (exports.init_folded as Fn)(0);
    assert.throws(() => (exports.init_folded as Fn)(1), WebAssembly.RuntimeError);
  }
});

Deno.test("segments out of order or overlapping are left as they are", async () => {
  for (
    const text of [
      `(data (i32.const 10) "ab") (data (i32.const 0) "cd")`,
      `(data (i32.const 0) "abcd") (data (i32.const 2) "XY")`,
    ]
  ) {
    const source = wat(`(module (memory (export "memory") 1) ${text})`);
    const out = instrument(source, { memoryPages: 1 });
    assert.deepEqual(segments(out), segments(source));
    assert.deepEqual(await memoryOf(out), await memoryOf(source));
  }
});

Deno.test("a joined segment that ends out of bounds still fails instantiation", async () => {
  const source = wat(`(module (memory (export "memory") 1)
    (data (i32.const 65530) "abc")
    (data (i32.const 65536) "d"))`);
  const out = instrument(source, { memoryPages: 1 });
  assert.equal(segments(out).filter((s) => s.offset !== null).length, 1);
  for (const bytes of [source, out]) {
    await assert.rejects(() => instantiate(bytes, FUEL), WebAssembly.RuntimeError);
  }
});

Deno.test("the zeros added are bounded: tiny segments far apart at most double the data, plus the allowance", async () => {
  // One-byte segments, each MAX_GAP - 1 bytes after the last: joining them all
  // would write 63 zeros per byte of data.
  const count = 4000;
  const parts = Array.from(
    { length: count },
    (_, i) => `(data (i32.const ${i * MAX_GAP}) "\\2a")`,
  ).join(" ");
  const source = wat(`(module (memory (export "memory") 4) ${parts})`);
  const out = instrument(source, { memoryPages: 4 });
  const joined = segments(out).filter((s) => s.offset !== null);
  assert.ok(joined.length > 1 && joined.length < count, `${joined.length} active segments`);
  const added = joined.reduce((sum, s) => sum + s.length, 0) - count;
  assert.ok(added <= count + ZERO_ALLOWANCE, `${added} zero bytes added for ${count} of data`);
  assert.ok(dataSectionBytes(out) <= 2 * dataSectionBytes(source) + ZERO_ALLOWANCE);
  assert.deepEqual(await memoryOf(out), await memoryOf(source));
});
