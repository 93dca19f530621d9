/**
 * Which warm plugins get write tracking (only the blocks a call wrote are
 * restored) and which get their whole memory copied back: memories of four
 * pages or more, and tiny modules whatever their memory; a larger module with
 * a small memory (an AssemblyScript guard, which stores a lot) is copied back.
 */
import assert from "node:assert/strict";
import wabtInit from "wabt";
import {
  MULTI_MEMORY,
  prepare,
  TRACK_MAX_TINY,
  TRACK_MIN_PAGES,
} from "../../packages/runtime-wasm/_loader.ts";
import { compileBytes, PromiseCache } from "../../packages/runtime-wasm/_cache.ts";

const wabt = await wabtInit();

/** A WASI command with `pages` of memory and `padding` bytes of data. */
function plugin(pages: number, padding: number): Uint8Array {
  const data = padding === 0 ? "" : `(data (i32.const 0) "${"x".repeat(padding)}")`;
  const module = wabt.parseWat(
    "p.wat",
    `(module (memory (export "memory") ${pages}) ${data}
       (func (export "_start") (i32.store (i32.const 8) (i32.const 1))))`,
    {},
  );
  try {
    return new Uint8Array(module.toBinary({}).buffer);
  } finally {
    module.destroy();
  }
}

async function tracked(bytes: Uint8Array): Promise<boolean> {
  const loaded = await prepare(bytes, {
    limits: { memoryMb: 16, moduleKb: 1024 },
    compile: compileBytes,
    modules: new PromiseCache(4),
    trackWrites: true,
  });
  return WebAssembly.Module.exports(loaded.module).some((e) => e.name === "__hookbox_dirty");
}

Deno.test("warm write tracking: big memories and tiny modules, not small memories of big modules", async () => {
  assert.ok(MULTI_MEMORY, "Deno's V8 has multi-memory");
  assert.ok(plugin(1, 0).byteLength <= TRACK_MAX_TINY);
  assert.equal(await tracked(plugin(1, 0)), true, "tiny module, one page");
  assert.equal(await tracked(plugin(TRACK_MIN_PAGES, TRACK_MAX_TINY)), true, "four pages");
  assert.equal(await tracked(plugin(1, TRACK_MAX_TINY)), false, "past the tiny size, one page");
});
