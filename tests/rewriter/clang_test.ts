import assert from "node:assert/strict";
import { inspectModule, instrument } from "../../packages/rewriter/mod.ts";
import { Exit, wasiImports } from "./_wasi.ts";
import { tempDir } from "../_helpers.ts";

async function buildWithClang(): Promise<Uint8Array<ArrayBuffer>> {
  const dir = await tempDir("hookbox_clang_");
  try {
    const out = `${dir}/kernel.wasm`;
    const src = new URL("./fixtures/clang_kernel.c", import.meta.url).pathname;
    const args = ["--target=wasm32-wasi", "--sysroot=/usr", "-O2", "-o", out, src];
    let result: Deno.CommandOutput;
    try {
      result = await new Deno.Command("clang", { args, stderr: "piped" }).output();
    } catch (err) {
      throw new Error(`clang is required for this test (apt install clang lld wasi-libc): ${err}`);
    }
    assert.ok(result.success, `clang failed: ${new TextDecoder().decode(result.stderr)}`);
    return await Deno.readFile(out);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function run(bytes: Uint8Array<ArrayBuffer>) {
  let exports: WebAssembly.Exports = {};
  let refuels = 0;
  const { wasi, stdout } = wasiImports(() => exports.memory as WebAssembly.Memory);
  const hookbox = {
    out_of_fuel() {
      refuels++;
      (exports.__hookbox_fuel as WebAssembly.Global).value = 1_000_000n;
    },
  };
  const { instance } = await WebAssembly.instantiate(bytes, {
    wasi_snapshot_preview1: wasi,
    hookbox,
  });
  exports = instance.exports;
  let code = 0;
  try {
    (exports._start as () => void)();
  } catch (err) {
    if (!(err instanceof Exit)) throw err;
    code = err.code;
  }
  return { code, stdout: stdout(), refuels };
}

Deno.test("`instrument()` keeps a clang-built wasm32-wasi command working", async () => {
  const plain = await buildWithClang();
  const imports = inspectModule(plain).imports;
  assert.ok(imports.every((i) => i.module === "wasi_snapshot_preview1" && i.kind === "func"));
  const expected = await run(plain);
  assert.match(expected.stdout, /^min=\d+ max=\d+ acc=\d+ fib=46368 len=9\n$/);
  const metered = instrument(plain, { memoryPages: 256 });
  assert.ok(WebAssembly.validate(metered));
  const got = await run(metered);
  assert.equal(got.stdout, expected.stdout);
  assert.equal(got.code, expected.code);
  assert.ok(got.code > 0 && got.refuels > 0);
});

Deno.test("`instrument()` memory cap makes a clang-built command fail its allocation", async () => {
  const plain = await buildWithClang();
  const capped = instrument(plain, { memoryPages: 40 }); // 2.5 MiB: the 4 MiB malloc fails
  const got = await run(capped);
  assert.deepEqual([got.code, got.stdout], [99, "out of memory\n"]);
});
