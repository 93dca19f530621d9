/**
 * Compiled JS hooks inside the sandbox: runaway loops are stopped, and Node
 * APIs that escaped compile-time checks fail at run time naming the API.
 */
import assert from "node:assert/strict";
import { compileJsHook } from "../../packages/compile/js.ts";
import { runWasi } from "./_js_wasi_harness.ts";
import { fixture, TEST_CACHE, wasmRunner } from "./_js_runner.ts";
import { runFailure } from "../../packages/core/runtime/failure.ts";

Deno.test("a compiled `while (true) {}` hook is stopped by the fuel limit", async () => {
  const wasm = await wasmRunner("loop_forever.js", { fuel: 50_000_000 });
  try {
    const result = await wasm.run("{}");
    assert.equal(result.exitCode, null);
    assert.deepEqual(result.failure, runFailure("LIMIT_FUEL"));
  } finally {
    await wasm.close();
  }
});

Deno.test("a compiled `while (true) {}` hook is stopped at its deadline", async () => {
  const wasm = await wasmRunner("loop_forever.js", { fuel: 1e15, timeoutMs: 200 });
  try {
    const result = await wasm.run("{}");
    assert.equal(result.exitCode, null);
    assert.equal(result.failure?.outcome, "timeout");
  } finally {
    await wasm.close();
  }
});

Deno.test("a compiled hook that allocates without end hits the memory cap", async () => {
  const wasm = await wasmRunner("memory_hog.js", { memoryMb: 16 });
  try {
    const result = await wasm.run("{}");
    assert.notEqual(result.exitCode, 0);
    assert.deepEqual(result.failure, runFailure("LIMIT_MEMORY"));
    assert.match(result.stderr, /out of memory/);
  } finally {
    await wasm.close();
  }
});

Deno.test("the engine exits non-zero with a message once the host says to interrupt", async () => {
  const { bytes } = await compileJsHook(fixture("loop_forever.js"), { cacheDir: TEST_CACHE });
  const module = new WebAssembly.Module(bytes as Uint8Array<ArrayBuffer>);
  const result = await runWasi(module, { interruptAfter: 3 });
  assert.equal(result.exitCode, 124);
  assert.match(result.stderr, /stopped: the call's time or fuel budget is spent/);
});

for (
  const [name, api] of [
    ["denied_dynamic.js", 'require("child_process")'],
    ["denied_file_read.js", 'fs.readFileSync("/etc/passwd")'],
  ]
) {
  Deno.test(`${name}: ${api} fails at run time with an error naming it`, async () => {
    const wasm = await wasmRunner(name!);
    try {
      const result = await wasm.run("{}");
      assert.equal(result.exitCode, 1);
      assert.equal(result.stdout, "");
      assert.ok(
        result.stderr.includes(`${api} is not available in the hookbox sandbox`),
        result.stderr,
      );
    } finally {
      await wasm.close();
    }
  });
}
