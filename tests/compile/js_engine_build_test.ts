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

Deno.test("buildEngine() trusts its stamp only while the engine file keeps its size and mtime", async () => {
  const real = await buildEngine();
  const root = await Deno.makeTempDir({ prefix: "hookbox_engine_" });
  try {
    // A cache root holding a copy of the built engine: no clang run needed.
    const keyDir = real.path.split("/").at(-2)!;
    await Deno.mkdir(`${root}/${keyDir}`);
    const copy = `${root}/${keyDir}/engine.wasm`;
    await Deno.copyFile(real.path, copy);
    assert.equal((await buildEngine(root)).sha256, real.sha256);
    const [stamp] = [...Deno.readDirSync(`${root}/stamps`)].map((e) => `${root}/stamps/${e.name}`);
    assert.ok(stamp, "a stamp was written");
    // The stamp is what a later run trusts (shown by planting a wrong hash in it)...
    const planted = { ...JSON.parse(await Deno.readTextFile(stamp)), sha256: "f".repeat(64) };
    await Deno.writeTextFile(stamp, JSON.stringify(planted));
    assert.equal((await buildEngine(root)).sha256, "f".repeat(64));
    // ...until the engine file changes: then the engine is hashed again and the stamp rewritten.
    await Deno.utime(copy, new Date(), new Date(Date.now() - 60_000));
    assert.equal((await buildEngine(root)).sha256, real.sha256);
    assert.equal(JSON.parse(await Deno.readTextFile(stamp)).sha256, real.sha256);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
