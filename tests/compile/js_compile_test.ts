/**
 * `compileJsHook()`: caching by content, compile-time refusal of sandbox-less
 * Node APIs, and the shape of the produced plugin.
 */
import assert from "node:assert/strict";
import { compileJsHook } from "../../packages/compile/js.ts";
import { isHookboxError } from "../../packages/core/errors.ts";
import { fixture, TEST_CACHE } from "./_js_runner.ts";
import { tempDir } from "../_helpers.ts";

/** The WASI functions the engine may import (all emulated by the host). */
const ALLOWED_IMPORTS = new Set([
  "wasi_snapshot_preview1.fd_read",
  "wasi_snapshot_preview1.fd_write",
  "wasi_snapshot_preview1.fd_close",
  "wasi_snapshot_preview1.fd_seek",
  "wasi_snapshot_preview1.fd_fdstat_get",
  "wasi_snapshot_preview1.proc_exit",
  "wasi_snapshot_preview1.clock_time_get",
  "wasi_snapshot_preview1.random_get",
  "wasi_snapshot_preview1.environ_get",
  "wasi_snapshot_preview1.environ_sizes_get",
  "hookbox.should_interrupt",
]);

Deno.test("compileJsHook() reuses the plugin of an unchanged script and recompiles an edited one", async () => {
  const dir = await tempDir("hookbox-js-cache-");
  try {
    const script = `${dir}/run.js`;
    await Deno.writeTextFile(script, 'console.log("one");\n');
    const cacheDir = `${dir}/cache`;
    const first = await compileJsHook(script, { cacheDir });
    const again = await compileJsHook(script, { cacheDir });
    assert.equal(first.cached, false);
    assert.equal(again.cached, true);
    assert.equal(again.sha256, first.sha256);
    assert.deepEqual(again.bytes, first.bytes);
    await Deno.writeTextFile(script, 'console.log("two");\n');
    const edited = await compileJsHook(script, { cacheDir });
    assert.equal(edited.cached, false);
    assert.notEqual(edited.sha256, first.sha256);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

for (
  const [name, api] of [["denied_child_process.js", "child_process"], ["denied_net.mjs", "net"]]
) {
  Deno.test(`compileJsHook() refuses ${api} at compile time with COMPILE_API_DENIED`, async () => {
    await assert.rejects(
      compileJsHook(fixture(name!), { cacheDir: TEST_CACHE }),
      (err) => {
        assert.ok(isHookboxError(err, "COMPILE_API_DENIED"), String(err));
        assert.match(err.message, new RegExp(`${api} is not available in the sandbox`));
        return true;
      },
    );
  });
}

Deno.test("compileJsHook() refuses to read files outside the hook folder", async () => {
  await assert.rejects(
    compileJsHook(fixture("outside_import.js"), { cacheDir: TEST_CACHE }),
    (err) => {
      assert.ok(isHookboxError(err, "COMPILE_API_DENIED"), String(err));
      assert.match(err.message, /deno\.json is outside the hook folder/);
      return true;
    },
  );
});

Deno.test("compileJsHook() refuses a symlink that leads out of the hook folder", async () => {
  const dir = await tempDir("hookbox-js-link-");
  try {
    await Deno.mkdir(`${dir}/hook/scripts`, { recursive: true });
    await Deno.writeTextFile(`${dir}/secret.json`, '{"token":"s3cr3t"}');
    await Deno.symlink(`${dir}/secret.json`, `${dir}/hook/scripts/data.json`);
    await Deno.writeTextFile(
      `${dir}/hook/scripts/run.js`,
      'console.log(require("./data.json"));\n',
    );
    await assert.rejects(
      compileJsHook(`${dir}/hook/scripts/run.js`, { cacheDir: `${dir}/cache` }),
      (err) => isHookboxError(err, "COMPILE_API_DENIED"),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("compileJsHook() reports a syntax error as COMPILE_FAILED naming the file", async () => {
  const dir = await tempDir("hookbox-js-bad-");
  try {
    await Deno.writeTextFile(`${dir}/run.js`, "const = 1;\n");
    await assert.rejects(compileJsHook(`${dir}/run.js`, { cacheDir: `${dir}/cache` }), (err) => {
      assert.ok(isHookboxError(err, "COMPILE_FAILED"), String(err));
      assert.match(err.message, /run\.js:1/);
      return true;
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("compileJsHook() output is a WASI command importing only host-emulated functions", async () => {
  const { bytes, sha256 } = await compileJsHook(fixture("cjs_guard.js"), { cacheDir: TEST_CACHE });
  const module = new WebAssembly.Module(bytes as Uint8Array<ArrayBuffer>);
  const imports = WebAssembly.Module.imports(module).map((i) => `${i.module}.${i.name}`);
  assert.deepEqual(imports.filter((name) => !ALLOWED_IMPORTS.has(name)), []);
  const exports = WebAssembly.Module.exports(module).map((e) => e.name).sort();
  assert.deepEqual(exports, ["_start", "memory"]);
  assert.match(sha256, /^[0-9a-f]{64}$/);
});

Deno.test("a compiled JS hook's memory starts at 16 wasm pages (1 MiB: a warm instance's size)", async () => {
  // The snapshot's heap, the shadow stack and the per-call arena must fit in 1 MiB; a page more
  // (the arena not fitting the heap's free top) costs every warm instance 64 KiB.
  const { inspectModule } = await import("../../packages/rewriter/mod.ts");
  for (const name of ["cjs_guard.js", "fn_guard.mjs"]) {
    const { bytes } = await compileJsHook(fixture(name), { cacheDir: TEST_CACHE });
    assert.deepEqual(inspectModule(bytes).memories.map((m) => m.min), [16], name);
  }
});

Deno.test("compileJsHook() builds several scripts at once in one process", async () => {
  const dir = await tempDir("hookbox-js-together-");
  try {
    const scripts = await Promise.all([0, 1, 2, 3].map(async (i) => {
      const script = `${dir}/run${i}.js`;
      await Deno.writeTextFile(script, `console.log("script ${i}");\n`);
      return script;
    }));
    // Each bundle used to stop esbuild's one service process when it finished: the others died.
    const built = await Promise.all(
      scripts.map((script) => compileJsHook(script, { cacheDir: `${dir}/cache` })),
    );
    assert.equal(new Set(built.map((b) => b.sha256)).size, 4);
    assert.ok(built.every((b) => !b.cached));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
