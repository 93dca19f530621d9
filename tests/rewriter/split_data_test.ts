/**
 * `splitData`: a module apart from the data its memory starts with. The
 * skeleton with its image written into a memory of the original size is
 * the module as it was: the same memory, the same answers, `memory.init`
 * of a passive segment included; modules that differ only in data give the
 * same skeleton; modules it cannot split are left alone.
 */
import { deepStrictEqual as assertEquals, equal, ok } from "node:assert/strict";
import fc from "fast-check";
import { splitData } from "../../packages/rewriter/mod.ts";
import { decodeRuns, deltaRuns, encodeRuns } from "../../packages/edge/bundle_data.ts";
import { wat } from "./_wat.ts";

/** `bytes` with a custom section `name` holding `text` at the end (all sizes under 128). */
function withCustom(
  bytes: Uint8Array<ArrayBuffer>,
  name: string,
  text: string,
): Uint8Array<ArrayBuffer> {
  const payload = new TextEncoder().encode(text);
  const named = new TextEncoder().encode(name);
  const section = [0, 1 + named.length + payload.length, named.length, ...named, ...payload];
  return new Uint8Array([...bytes, ...section]);
}

/** A module of `pages` pages with `data` (WAT data fields), a passive segment it copies in, a line table. */
const module = (pages: number, data: string) =>
  withCustom(
    wat(`(module
  (memory (export "memory") ${pages} 100)
  (data $passive "passive!")
  ${data}
  (func (export "copy") (memory.init $passive (i32.const 60000) (i32.const 0) (i32.const 8)))
  (func (export "read") (param i32) (result i32) (i32.load8_u (local.get 0))))`),
    "hookbox.lines",
    "1 2 3",
  );

/** Memory 0 of `bytes` after instantiation and `copy()`. */
async function memoryOf(bytes: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  const { instance } = await WebAssembly.instantiate(bytes);
  (instance.exports.copy as () => void)();
  return new Uint8Array((instance.exports.memory as WebAssembly.Memory).buffer);
}

/** The skeleton, given a memory of the original size with the image written in. */
async function splitMemoryOf(bytes: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  const split = splitData(bytes, ["hookbox.lines"])!;
  // The skeleton defines its memory (minimum 0): grow it to the original size and write the image.
  const { instance } = await WebAssembly.instantiate(split.skeleton);
  const memory = instance.exports.memory as WebAssembly.Memory;
  equal(memory.buffer.byteLength, 0);
  memory.grow(split.pages);
  for (const [offset, data] of split.runs) new Uint8Array(memory.buffer).set(data, offset);
  (instance.exports.copy as () => void)();
  return new Uint8Array(memory.buffer);
}

Deno.test("a module's skeleton with its image is the module, passive segments included", async () => {
  // Overlapping segments (the later wins), zeros inside, one at the very end of the memory.
  const bytes = module(
    2,
    `(data (i32.const 16) "hello, world") (data (i32.const 20) "O") (data (i32.const 100) "a\\00\\00b")
     (data (i32.const 131070) "zz")`,
  );
  assertEquals(await splitMemoryOf(bytes), await memoryOf(bytes));
  const split = splitData(bytes, ["hookbox.lines"])!;
  assertEquals([split.pages, split.maxPages], [2, 100]);
  assertEquals(new TextDecoder().decode(split.custom["hookbox.lines"]), "1 2 3");
  ok(!new TextDecoder().decode(split.skeleton).includes("hookbox.lines"), "line table left out");
});

Deno.test("modules that differ only in their data and size split to the same skeleton", () => {
  const a = splitData(module(1, `(data (i32.const 8) "one")`), ["hookbox.lines"])!;
  const b = splitData(module(3, `(data (i32.const 9000) "three") (data (i32.const 5) "x")`), [
    "hookbox.lines",
  ])!;
  assertEquals(a.skeleton, b.skeleton);
  ok(a.runs.length === 1 && b.runs.length === 2);
});

Deno.test("modules the split cannot apply to are left alone", () => {
  // No memory; data past the initial size (instantiation must still fail); a computed offset.
  equal(splitData(wat(`(module (func (export "f")))`)), null);
  equal(splitData(module(1, `(data (i32.const 65535) "ab")`)), null);
  equal(
    splitData(wat(`(module (global $g i32 (i32.const 4)) (memory 1) (data (global.get $g) "x"))`)),
    null,
  );
  equal(
    splitData(wat(`(module (import "hookbox" "memory" (memory 1)) (data (i32.const 0) "x"))`)),
    null,
  );
});

Deno.test("an image is its base's runs then its own delta, whatever the two images", () => {
  const runs = fc.array(
    fc.tuple(fc.integer({ min: 0, max: 3000 }), fc.uint8Array({ minLength: 1, maxLength: 200 })),
    { maxLength: 12 },
  );
  const image = (rs: [number, Uint8Array][], size: number) => {
    const out = new Uint8Array(size);
    for (const [offset, data] of rs) out.set(data, offset);
    return out;
  };
  fc.assert(fc.property(runs, runs, (base, own) => {
    const size = 3300;
    const delta = deltaRuns(base, own);
    // Through the bundle's encoding, as the Worker reads it.
    const bytes = new Uint8Array([...encodeRuns(base), ...encodeRuns(delta)]);
    const back = [
      ...decodeRuns(bytes.buffer, 0),
      ...decodeRuns(bytes.buffer, encodeRuns(base).length),
    ];
    assertEquals(image(back, size), image(own, size));
  }));
});

Deno.test("code that names an active segment keeps every segment's index", async () => {
  // Passive first, as in the JS engine; \`data.drop 2\` names the second active segment.
  const bytes = wat(`(module
  (memory (export "memory") 1)
  (data $passive "passive!")
  (data (i32.const 8) "one")
  (data (i32.const 20) "two")
  (func (export "copy")
    (data.drop 2)
    (memory.init $passive (i32.const 100) (i32.const 0) (i32.const 8))))`);
  const split = splitData(bytes)!;
  ok(WebAssembly.validate(split.skeleton));
  assertEquals(await splitMemoryOf(bytes), await memoryOf(bytes));
});
