import assert from "node:assert/strict";
import { compileAsHook } from "../../packages/compile/as.ts";
import { isHookboxError } from "../../packages/core/errors.ts";
import { bashEvent, runHook } from "./_as_harness.ts";
import { tempDir } from "../_helpers.ts";

const fixture = (name: string) => new URL(`../fixtures/as/${name}`, import.meta.url).pathname;

async function inTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await tempDir("hookbox-as-");
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("`compileAsHook()` output is a WASI command: it imports fd_read, fd_write and proc_exit only, and exports _start", async () => {
  await inTempDir(async (cacheDir) => {
    const { bytes } = await compileAsHook(fixture("modify_input.as.ts"), { cacheDir });
    const module = new WebAssembly.Module(bytes as Uint8Array<ArrayBuffer>);
    const imports = WebAssembly.Module.imports(module).map((i) => `${i.module}.${i.name}`);
    assert.deepEqual(imports.sort(), [
      "wasi_snapshot_preview1.fd_read",
      "wasi_snapshot_preview1.fd_write",
      "wasi_snapshot_preview1.proc_exit",
    ]);
    const start = WebAssembly.Module.exports(module).find((e) => e.name === "_start");
    assert.equal(start?.kind, "function");
  });
});

Deno.test("`compileAsHook()` fixture prints JSON modified_input on stdout", async () => {
  await inTempDir(async (cacheDir) => {
    const { bytes } = await compileAsHook(fixture("modify_input.as.ts"), { cacheDir });
    const run = await runHook(bytes, bashEvent('echo "hi"\n'));
    assert.equal(run.exitCode, 0);
    assert.deepEqual(JSON.parse(run.stdout), {
      decision: "allow",
      modified_input: { command: 'timeout 60 echo "hi"\n' },
    });
  });
});

Deno.test("`compileAsHook()` plugin returns any exit code and passes bytes through unchanged", async () => {
  await inTempDir(async (cacheDir) => {
    const { bytes } = await compileAsHook(fixture("echo_bytes.as.ts"), { cacheDir });
    const event = JSON.stringify({ text: "héllo ✓ 🚀", pad: "x".repeat(1001) });
    const run = await runHook(bytes, event);
    assert.equal(run.exitCode, 7);
    assert.equal(run.stdout, event);
  });
});

Deno.test("`compileAsHook()` reports compile errors as COMPILE_FAILED with diagnostics", async () => {
  await inTempDir(async (cacheDir) => {
    const path = fixture("syntax_error.as.ts");
    const err = await compileAsHook(path, { cacheDir }).catch((e) => e);
    assert.ok(isHookboxError(err, "COMPILE_FAILED"), String(err));
    assert.match(err.message, /TS2322/);
    assert.ok(err.message.includes(path), err.message);
    assert.equal(err.path, path);
  });
});

Deno.test("`compileAsHook()` refuses host APIs hookbox does not offer (Math.random)", async () => {
  await inTempDir(async (cacheDir) => {
    const err = await compileAsHook(fixture("uses_random.as.ts"), { cacheDir }).catch((e) => e);
    assert.ok(isHookboxError(err, "COMPILE_API_DENIED"), String(err));
    assert.match(err.message, /env\.seed/);
  });
});

Deno.test("`compileAsHook()` plugin traps on abort (assert, unreachable) instead of importing env.abort", async () => {
  await inTempDir(async (cacheDir) => {
    const { bytes } = await compileAsHook(fixture("aborts.as.ts"), { cacheDir });
    const run = await runHook(bytes, "{}");
    assert.equal(run.failure?.outcome, "error");
    assert.match(run.failure?.detail ?? "", /^trap: /);
  });
});

Deno.test("`compileAsHook()` serves unchanged sources from the cache and recompiles edits", async () => {
  await inTempDir(async (dir) => {
    const entry = `${dir}/run.as.ts`;
    const cacheDir = `${dir}/cache`;
    await Deno.copyFile(fixture("echo_bytes.as.ts"), entry);
    const first = await compileAsHook(entry, { cacheDir });
    const second = await compileAsHook(entry, { cacheDir });
    assert.equal(first.cached, false);
    assert.equal(second.cached, true);
    assert.equal(second.sha256, first.sha256);
    const source = await Deno.readTextFile(entry);
    await Deno.writeTextFile(entry, source.replace("return 7;", "return 9;"));
    const edited = await compileAsHook(entry, { cacheDir });
    assert.equal(edited.cached, false);
    assert.notEqual(edited.sha256, first.sha256);
    assert.equal((await runHook(edited.bytes, "{}")).exitCode, 9);
  });
});
