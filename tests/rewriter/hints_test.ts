import assert from "node:assert/strict";
import { instrument, splitData } from "../../packages/rewriter/mod.ts";
import {
  COMPILATION_PRIORITY,
  compilationHintsSection,
  hintedFunctions,
} from "../../packages/rewriter/_hints.ts";
import { SECTION, splitSections } from "../../packages/rewriter/decode/_module.ts";
import { Reader } from "../../packages/rewriter/decode/_reader.ts";
import { Writer } from "../../packages/rewriter/encode/_writer.ts";
import { wat } from "./_wat.ts";

// One imported function (index 0), then $a (1), $b (2), $c (3).
const MODULE = wat(`(module
  (import "env" "log" (func $log (param i32)))
  (func $a (export "a") (result i32) (i32.const 1))
  (func $b (export "b") (result i32) (call $a))
  (func $c (export "c") (result i32) (call $b))
  (memory 1))`);

/** `bytes` with a custom section (payload = name + contents) appended. */
function withCustom(bytes: Uint8Array, payload: Uint8Array): Uint8Array<ArrayBuffer> {
  return new Writer().bytes(bytes).u8(0).sized(payload).finish();
}

/** The function indices of the output's hints section, and whether it precedes the code section. */
function hints(
  bytes: Uint8Array,
): { indices: number[] | null; beforeCode: boolean; count: number } {
  const sections = splitSections(bytes);
  const found = sections.filter((s) => s.customName === COMPILATION_PRIORITY);
  if (found.length === 0) return { indices: null, beforeCode: false, count: 0 };
  const r = new Reader(bytes, found[0]!.start, found[0]!.end);
  r.name();
  const code = sections.findIndex((s) => s.id === SECTION.code);
  return {
    indices: hintedFunctions(r.take(found[0]!.end - r.pos)),
    beforeCode: sections.indexOf(found[0]!) < code,
    count: found.length,
  };
}

function funcImports(bytes: Uint8Array<ArrayBuffer>): number {
  return WebAssembly.Module.imports(new WebAssembly.Module(bytes))
    .filter((i) => i.kind === "function").length;
}

Deno.test("instrumenting renumbers compilation hints with the functions and moves them before the code", () => {
  const input = withCustom(MODULE, compilationHintsSection([0, 1, 3]));
  const out = instrument(input, { memoryPages: 1 });
  const added = funcImports(out) - 1;
  assert.ok(added > 0, "the instrumented module imports the fuel host");
  const found = hints(out);
  assert.equal(found.count, 1);
  assert.ok(found.beforeCode, "V8 reads the hints only before the code section");
  // $a and $c, renumbered; the import (0) is not a function V8 compiles.
  assert.deepEqual(found.indices, [1 + added, 3 + added]);
  const module = new WebAssembly.Module(out);
  const instance = new WebAssembly.Instance(module, {
    env: { log: () => {} },
    hookbox: { out_of_fuel: () => {}, grow_failed: () => {}, should_interrupt: () => 0 },
  });
  (instance.exports.__hookbox_fuel as WebAssembly.Global).value = 1_000_000n;
  assert.equal((instance.exports.c as () => number)(), 1);
});

Deno.test("a hint reaches V8 as its compilation priority alone; other code metadata, its offsets stale, is dropped", () => {
  const input = withCustom(
    withCustom(MODULE, hintPayload([[2, 0, [5, 0x7f]]])),
    new Writer().name("metadata.code.branch_hint").u32(1).u32(2).u32(1).u32(1).u32(1).u8(1)
      .finish(),
  );
  const out = instrument(input, { memoryPages: 1 });
  const added = funcImports(out) - 1;
  const sections = WebAssembly.Module.customSections(
    new WebAssembly.Module(out),
    COMPILATION_PRIORITY,
  );
  assert.deepEqual(
    [...new Uint8Array(sections[0]!)],
    [...new Writer().u32(1).u32(2 + added).u32(0).u32(1).u32(5).finish()],
  );
  assert.deepEqual(
    splitSections(out).filter((s) => s.customName?.startsWith("metadata.code.")).map((s) =>
      s.customName
    ),
    [COMPILATION_PRIORITY],
  );
});

Deno.test("malformed compilation hints are dropped, never passed on", () => {
  const cases: [string, Uint8Array][] = [
    ["truncated", compilationHintsSection([1, 2]).subarray(0, -2)],
    ["out of order", hintPayload([[3, 0, [0]], [1, 0, [0]]])],
    ["repeated", hintPayload([[1, 0, [0]], [1, 0, [0]]])],
    ["not function level", hintPayload([[1, 5, [0]]])],
    ["empty hint", hintPayload([[1, 0, []]])],
    ["trailing bytes", new Writer().bytes(compilationHintsSection([1])).u8(7).finish()],
    ["only imports and unknown functions", hintPayload([[0, 0, [0]], [99, 0, [0]]])],
  ];
  for (const [what, payload] of cases) {
    const out = instrument(withCustom(MODULE, payload), { memoryPages: 1 });
    assert.equal(hints(out).count, 0, what);
    assert.ok(WebAssembly.validate(out), what);
  }
  assert.equal(hints(instrument(MODULE, { memoryPages: 1 })).count, 0, "none in, none out");
});

/** A hints section from raw entries: [function index, byte offset, hint bytes]. */
function hintPayload(entries: [number, number, number[]][]): Uint8Array<ArrayBuffer> {
  const w = new Writer().name(COMPILATION_PRIORITY).u32(entries.length);
  for (const [index, offset, hint] of entries) {
    w.u32(index).u32(offset).sized(new Uint8Array(hint));
  }
  return w.finish();
}

Deno.test("a module split from its data keeps its compilation hints (JS hooks share such a module)", () => {
  // Source: the shared engine module of JS hooks lost its hints, so its hot functions compiled
  // lazily on the calling thread: a one-shot call with two JS hooks gained nothing from sharing.
  const withData = wat(`(module
    (func $a (export "a") (result i32) (i32.const 1))
    (func $b (export "b") (result i32) (call $a))
    (memory (export "memory") 1)
    (data (i32.const 16) "snapshot"))`);
  const split = splitData(withCustom(withData, compilationHintsSection([1])), []);
  assert.ok(split !== null, "the module splits");
  const found = hints(split.skeleton);
  assert.deepEqual([found.count, found.indices, found.beforeCode], [1, [1], true]);
  // And instrumented (as the loader does), the hint follows its function.
  const out = instrument(split.skeleton, { memoryPages: 1, importMemory: true });
  const added = funcImports(out);
  assert.deepEqual(hints(out).indices, [1 + added]);
});
