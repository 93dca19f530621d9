/**
 * `instrument()` importMemory: the module's one memory becomes the import
 * `hookbox.memory` with its initial size and capped maximum, everything else
 * unchanged; modules it does not fit are left defining their memory.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { instrumentModule } from "../../packages/rewriter/mod.ts";
import { fixture } from "./_wat.ts";

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

Deno.test("`instrument()` importMemory leaves tracked and memory-less modules as they were", async () => {
  const tracked = instrumentModule(await fixture("memory_grow.wat"), {
    memoryPages: 4,
    importMemory: true,
    trackWrites: true,
  });
  assertEquals(tracked.report.memoryImport, null);
  assertEquals(memoryImports(tracked.bytes), []);
  const none = instrumentModule(await fixture("loop_forever.wat"), {
    memoryPages: 4,
    importMemory: true,
  });
  assertEquals(none.report.memoryImport, null, "a module without memory imports none");
  const plain = instrumentModule(await fixture("memory_grow.wat"), { memoryPages: 4 });
  assertEquals(plain.report.memoryImport, null, "not asked for: defined as before");
});
