/**
 * Typed function references (`ref.as_non_null` 0xd4, `br_on_null` 0xd5,
 * `br_on_non_null` 0xd6) are decoded as the engine does: 0xd4 has no
 * immediate, the other two a label. A decoder that read them the other way
 * round would lose step with the engine right after them, and a loop placed
 * there would run without being metered. wabt cannot write these
 * instructions, so the modules are written byte by byte.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { runFailure } from "../../packages/core/runtime/failure.ts";
import { corpusRuntime, request, wasmHook, withoutFuel } from "./_corpus.ts";

/** A section: its id, its size, its bytes (all small here: one-byte sizes). */
const section = (id: number, bytes: number[]) => [id, bytes.length, ...bytes];
const name = (text: string) => [text.length, ...new TextEncoder().encode(text)];

/** A WASI command whose `_start` (function 0, declared for `ref.func`) has `body`. */
function command(body: number[]): Uint8Array<ArrayBuffer> {
  const code = [0x00, ...body, 0x0b]; // no locals, the body, end
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, [0x01, 0x60, 0x00, 0x00]), // one type: () -> ()
    ...section(3, [0x01, 0x00]), // one function of type 0
    ...section(5, [0x01, 0x00, 0x01]), // one memory, at least a page
    ...section(7, [0x02, ...name("memory"), 0x02, 0x00, ...name("_start"), 0x00, 0x00]),
    ...section(9, [0x01, 0x03, 0x00, 0x01, 0x00]), // declarative: funcref [0]
    ...section(10, [0x01, code.length, ...code]),
  ]);
}

const REF_FUNC_0 = [0xd2, 0x00];
const LOOP_FOREVER = [0x03, 0x40, 0x0c, 0x00, 0x0b]; // loop, br 0, end
const DROP = 0x1a;

Deno.test("a loop right after ref.as_non_null is metered (0xd4 takes no immediate)", async () => {
  const hidden = command([...REF_FUNC_0, 0xd4, ...LOOP_FOREVER, DROP]);
  assertEquals(WebAssembly.validate(hidden), true);
  const runtime = corpusRuntime({ as_non_null_loop: hidden });
  for (const isolation of ["fresh", "warm"]) {
    const hook = wasmHook("as_non_null_loop", { isolation });
    const result = await runtime.run(request(hook, undefined, { fuel: 1_000_000 }));
    assertEquals(result.failure, runFailure("LIMIT_FUEL"));
  }
  await runtime.close?.();
});

Deno.test("br_on_null and br_on_non_null carry a label (0xd5, 0xd6), and a loop after them is metered", async () => {
  // ref.func 0; br_on_null 0 (not taken: leaves the reference); drop; a block (result
  // funcref) of ref.func 0, br_on_non_null 0 (taken: out of the block with it),
  // unreachable; drop; then the loop.
  const body = [
    ...REF_FUNC_0,
    0xd5,
    0x00,
    DROP,
    0x02,
    0x70,
    ...REF_FUNC_0,
    0xd6,
    0x00,
    0x00,
    0x0b,
    DROP,
    ...LOOP_FOREVER,
  ];
  const bytes = command(body);
  assertEquals(WebAssembly.validate(bytes), true);
  const runtime = corpusRuntime({ br_on_null_loop: bytes });
  const result = await runtime.run(
    request(wasmHook("br_on_null_loop"), undefined, { fuel: 1_000_000 }),
  );
  assertEquals(result.failure, runFailure("LIMIT_FUEL"));
  // Without the loop the same instructions run to a normal exit.
  const plain = command(body.slice(0, -LOOP_FOREVER.length));
  const done = await corpusRuntime({ br_on_null_plain: plain }).run(
    request(wasmHook("br_on_null_plain")),
  );
  assertEquals(withoutFuel(done), { exitCode: 0, stdout: "", stderr: "" });
});
