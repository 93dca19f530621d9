import assert from "node:assert/strict";
import { inspectModule, instrument } from "../../packages/rewriter/mod.ts";
import { type HookboxError, isHookboxError } from "../../packages/core/errors.ts";
import { fixture, wat } from "./_wat.ts";

const isInvalid = (e: unknown) => isHookboxError(e, "PLUGIN_INVALID");

Deno.test("`inspectModule()` lists imports, exports and memories", async () => {
  const bytes = await fixture("imports_exports.wat");
  const info = inspectModule(bytes);
  assert.deepEqual(info.imports, [
    { module: "extism:host/env", name: "input_length", kind: "func" },
    { module: "wasi_snapshot_preview1", name: "fd_write", kind: "func" },
    { module: "env", name: "tbl", kind: "table" },
    { module: "env", name: "g", kind: "global" },
  ]);
  assert.deepEqual(info.exports, [
    { name: "memory", kind: "memory" },
    { name: "answer", kind: "global" },
    { name: "table", kind: "table" },
    { name: "hook", kind: "func" },
  ]);
  assert.deepEqual(info.memories, [{ min: 2, max: 16, imported: false, memory64: false }]);
  assert.equal(info.byteLength, bytes.length);
});

Deno.test("`inspectModule()` reports imported and 64-bit memories", async () => {
  assert.deepEqual(inspectModule(await fixture("imported_memory.wat")).memories, [
    { min: 1, max: null, imported: true, memory64: false },
  ]);
  assert.deepEqual(inspectModule(wat("(module (memory i64 3 70000))")).memories, [
    { min: 3, max: 70000, imported: false, memory64: true },
  ]);
});

Deno.test("`inspectModule()` rejects garbage bytes with PLUGIN_INVALID", async () => {
  const text = await Deno.readFile(new URL("./fixtures/garbage.txt", import.meta.url));
  assert.throws(() => inspectModule(text), (e) => isInvalid(e) && /magic/.test(String(e)));
  assert.throws(() => inspectModule(new Uint8Array()), isInvalid);
  const component = new Uint8Array([0, 0x61, 0x73, 0x6d, 0x0d, 0, 1, 0]);
  assert.throws(() => inspectModule(component), (e) => isInvalid(e) && /version/.test(String(e)));
  // Where decoding failed is a field of the error, not only words in its message.
  assert.throws(
    () => inspectModule(component),
    (e) =>
      isInvalid(e) && (e as HookboxError).offset === 4 && (e as HookboxError).toJSON().offset === 4,
  );
});

Deno.test("`inspectModule()` and `instrument()` reject every truncation of a module", async () => {
  const bytes = await fixture("indices.wat");
  for (let len = 0; len < bytes.length; len++) {
    const cut = bytes.slice(0, len);
    if (WebAssembly.validate(cut)) continue; // cut between sections: a smaller valid module
    assert.throws(() => inspectModule(cut), isInvalid, `inspect, length ${len}`);
    assert.throws(
      () => instrument(cut, { memoryPages: 1 }),
      isInvalid,
      `instrument, length ${len}`,
    );
  }
});

Deno.test("`inspectModule()` names the offset of a bad section", () => {
  const bytes = new Uint8Array([
    0,
    0x61,
    0x73,
    0x6d,
    1,
    0,
    0,
    0,
    0x01,
    0x80,
    0x80,
    0x80,
    0x80,
    0x80,
  ]);
  assert.throws(() => inspectModule(bytes), (e) => isInvalid(e) && /offset 9/.test(String(e)));
});

Deno.test("`instrument()` names an undecodable opcode instead of emitting a module", () => {
  // (func) whose body is the single reserved opcode 0xff then `end`.
  const bytes = new Uint8Array([
    0,
    0x61,
    0x73,
    0x6d,
    1,
    0,
    0,
    0, // header
    0x01,
    0x04,
    0x01,
    0x60,
    0x00,
    0x00, // type () -> ()
    0x03,
    0x02,
    0x01,
    0x00, // one function of type 0
    0x0a,
    0x05,
    0x01,
    0x03,
    0x00,
    0xff,
    0x0b, // body: no locals, 0xff, end
  ]);
  assert.throws(
    () => instrument(bytes, { memoryPages: 1 }),
    (e) => isInvalid(e) && /opcode 0xff/.test(String(e)),
  );
});

Deno.test("`instrument()` rejects a module that decodes but does not validate", () => {
  const bytes = wat("(module (func (result i32) (i32.const 1)))");
  const broken = bytes.slice();
  broken[broken.length - 3] = 0x42; // i32.const -> i64.const: type mismatch
  assert.throws(() => instrument(broken, { memoryPages: 1 }), isInvalid);
});

Deno.test("source text handed over as a plugin says to compile it first", () => {
  const source = new TextEncoder().encode("export default function (event) {}\n");
  assert.throws(
    () => inspectModule(source),
    (err) =>
      isHookboxError(err, "PLUGIN_INVALID") &&
      /these bytes are text \(source code\?\), not a plugin; compile .*hookbox compile HOOK_DIR/
        .test(err.message),
  );
  // Bytes that are not text get no such hint.
  assert.throws(
    () => inspectModule(new Uint8Array([1, 2, 3, 4, 5])),
    (err) => isHookboxError(err, "PLUGIN_INVALID") && !err.message.includes("source code"),
  );
});
