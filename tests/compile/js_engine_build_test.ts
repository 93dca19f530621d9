/**
 * `scripts/build_engine.ts` / `buildEngine()`: cached by content, and a clear
 * instruction when the C toolchain is missing.
 */
import assert from "node:assert/strict";
import { buildEngine } from "../../src/compile/_js_engine_deno.ts";
import { APT_HINT } from "../../src/compile/_js_toolchain_deno.ts";

const SCRIPT = new URL("../../scripts/build_engine.ts", import.meta.url).pathname;

Deno.test("buildEngine() reuses the engine while its sources are unchanged", async () => {
  const first = await buildEngine();
  const second = await buildEngine();
  assert.equal(second.cached, true);
  assert.equal(second.path, first.path);
  assert.equal(second.sha256, first.sha256);
});

Deno.test("build_engine.ts names the apt packages when clang is missing", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", SCRIPT],
    env: { PATH: "/nonexistent", NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 1);
  assert.ok(stderr.includes("TOOLCHAIN_MISSING"), stderr);
  assert.ok(stderr.includes(APT_HINT), stderr);
  assert.equal(APT_HINT, "apt-get install -y clang lld wasi-libc libclang-rt-14-dev-wasm32");
});
