/**
 * `instrument()` importMemory: the module's one memory becomes the import
 * `hookbox.memory` with its initial size and capped maximum, everything else
 * unchanged (a tracked module's block map is imported too, sized by the
 * host); modules it does not fit are left defining their memory.
 */
import { deepStrictEqual as assertEquals, equal } from "node:assert/strict";
import { blockMapPages, instrumentModule, WRITE_BLOCK_SHIFT } from "../../packages/rewriter/mod.ts";
import { fixture, instantiate } from "./_wat.ts";

const BLOCK = 1 << WRITE_BLOCK_SHIFT;

const memoryImports = (bytes: Uint8Array) =>
  WebAssembly.Module.imports(new WebAssembly.Module(bytes as Uint8Array<ArrayBuffer>))
    .filter((i) => i.kind === "memory");

Deno.test("`instrument()` importMemory imports the memory with its initial size and capped max", async () => {
  const plain = await fixture("memory_grow.wat");
  const { bytes, report } = instrumentModule(plain, { memoryPages: 4, importMemory: true });
  assertEquals(report.memoryImport, { min: 1, max: 4 });
  assertEquals(memoryImports(bytes), [{ module: "hookbox", name: "memory", kind: "memory" }]);
  // It runs on the memory it is given, and the cap still holds.
  const memory = new WebAssembly.Memory({ initial: 1, maximum: 4 });
  const imports: Record<string, Record<string, unknown>> = { hookbox: { memory } };
  for (const i of WebAssembly.Module.imports(new WebAssembly.Module(bytes))) {
    if (i.kind === "function") (imports[i.module] ??= {})[i.name] = () => {};
  }
  const { exports } = new WebAssembly.Instance(
    new WebAssembly.Module(bytes),
    imports as WebAssembly.Imports,
  );
  const grow = exports.grow as (n: number) => number;
  assertEquals(grow(3), 1);
  assertEquals(memory.buffer.byteLength, 4 * 65536, "the host's memory grew");
  assertEquals(grow(1), -1);
});

Deno.test("`instrument()` importMemory with trackWrites imports the block map too, marked by stores", async () => {
  const { bytes, report } = instrumentModule(await fixture("writes.wat"), {
    memoryPages: 8,
    importMemory: true,
    trackWrites: true,
  });
  assertEquals(report.writesTracked, true);
  assertEquals(report.memoryImport, { min: 4, max: 8 });
  assertEquals(memoryImports(bytes).map((i) => i.name), ["memory", "blocks"]);
  // The host sizes the map by the cap it gives the memory: 8 pages, 2,048 blocks, one page of map.
  const memory = new WebAssembly.Memory({ initial: 4, maximum: 8 });
  const blocks = new WebAssembly.Memory({ initial: blockMapPages(8), maximum: blockMapPages(8) });
  const { exports } = await instantiate(bytes, {
    slice: 1_000_000,
    slices: 10,
    imports: { hookbox: { memory, blocks } },
  });
  equal(exports.__hookbox_dirty, blocks, "the host finds the map where it always does");
  const map = new Uint8Array(blocks.buffer);
  (exports.i32 as (at: number) => void)(3 * BLOCK + 8);
  equal(new DataView(memory.buffer).getUint32(3 * BLOCK + 8, true), 0x01020304);
  assertEquals([...map.keys()].filter((b) => map[b] !== 0), [3]);
  // A fill that ends on the memory's last byte marks through its last block, and no further.
  map.fill(0);
  const end = memory.buffer.byteLength;
  (exports.fill as (at: number, n: number) => void)(end - 2 * BLOCK - 1, 2 * BLOCK + 1);
  const last = end / BLOCK;
  assertEquals([...map.keys()].filter((b) => map[b] !== 0), [last - 3, last - 2, last - 1]);
});

Deno.test("`instrument()` importMemory imports nothing for a memory-less module or when not asked", async () => {
  const none = instrumentModule(await fixture("loop_forever.wat"), {
    memoryPages: 4,
    importMemory: true,
  });
  assertEquals(none.report.memoryImport, null, "a module without memory imports none");
  const plain = instrumentModule(await fixture("memory_grow.wat"), { memoryPages: 4 });
  assertEquals(plain.report.memoryImport, null, "not asked for: defined as before");
  const tracked = instrumentModule(await fixture("memory_grow.wat"), {
    memoryPages: 4,
    trackWrites: true,
  });
  assertEquals(memoryImports(tracked.bytes), [], "tracked, not asked for: the map defined too");
});
