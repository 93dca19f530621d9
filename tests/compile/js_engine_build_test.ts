/**
 * `scripts/build_engine.ts` / `buildEngine()`: cached by content, and a clear
 * instruction when the C toolchain is missing.
 */
import assert from "node:assert/strict";
import { buildEngine } from "../../packages/compile/_js_engine.ts";
import { APT_HINT } from "../../packages/compile/_js_toolchain.ts";
import { HOT_FUNCTIONS } from "../../packages/compile/_js_clang.ts";
import { parseHotList } from "../../packages/compile/_js_hints.ts";
import { compileHook } from "../../packages/compile/mod.ts";
import { denoFs } from "../../packages/host-deno/fs.ts";
import { loadHook } from "../../packages/core/hook/discover.ts";
import { preparePlugin } from "../../packages/runtime-wasm/mod.ts";
import { COMPILATION_PRIORITY, hintedFunctions } from "../../packages/rewriter/_hints.ts";
import { splitSections } from "../../packages/rewriter/decode/_module.ts";
import { tempDir } from "../_helpers.ts";

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
  const root = await tempDir("hookbox_engine_");
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

/** Function indices a module's compilation-priority section lists (null: none). */
function hinted(bytes: Uint8Array<ArrayBuffer>): number[] | null {
  const sections = WebAssembly.Module.customSections(
    new WebAssembly.Module(bytes),
    COMPILATION_PRIORITY,
  );
  return sections.length === 0 ? null : hintedFunctions(new Uint8Array(sections[0]!));
}

Deno.test("the engine lists its hot functions as compilation hints, and a prepared JS hook keeps them", async () => {
  const engine = await buildEngine();
  const bytes = await Deno.readFile(engine.path);
  const custom = splitSections(bytes).filter((s) => s.customName !== undefined);
  // No name section or other leftovers of the link: only the hints.
  assert.deepEqual(custom.map((s) => s.customName), [COMPILATION_PRIORITY]);
  const names = new Map<number, string>(
    JSON.parse(await Deno.readTextFile(engine.path.replace(/engine\.wasm$/, "names.json"))),
  );
  const hot = parseHotList(await Deno.readTextFile(HOT_FUNCTIONS));
  assert.ok(hot.includes("JS_CallInternal"), "the interpreter loop is on the list");
  const listed = hinted(bytes)!;
  const byName = new Set(listed.map((i) => names.get(i)));
  // Every name on the list that the engine has is hinted, and nothing else.
  assert.deepEqual([...byName].sort(), hot.filter((n) => [...names.values()].includes(n)).sort());
  assert.ok(byName.size >= hot.length * 0.9, `${byName.size} of ${hot.length} names found`);

  // Through a JS hook's snapshot and the instrumentation, the same functions stay hinted.
  const dir = await tempDir("hookbox_hints_");
  try {
    await Deno.mkdir(`${dir}/h/scripts`, { recursive: true });
    await Deno.writeTextFile(
      `${dir}/h/HOOK.md`,
      "---\nname: h\ndescription: d\ntrigger: pre-tool-call\n---\n",
    );
    await Deno.writeTextFile(`${dir}/h/scripts/run.mjs`, 'console.log("{}");\n');
    const plugin = await compileHook(await loadHook(denoFs, `${dir}/h`, "project"), {
      cacheDir: `${dir}/cache`,
    });
    assert.deepEqual(hinted(plugin.bytes as Uint8Array<ArrayBuffer>), listed);
    const prepared = await preparePlugin(plugin.bytes, {
      limits: { memoryMb: 64, moduleKb: 4096 },
      isolation: "fresh",
    });
    const shift =
      WebAssembly.Module.imports(new WebAssembly.Module(prepared.bytes as Uint8Array<ArrayBuffer>))
        .filter((i) => i.kind === "function").length -
      WebAssembly.Module.imports(new WebAssembly.Module(bytes)).filter((i) => i.kind === "function")
        .length;
    assert.deepEqual(
      hinted(prepared.bytes as Uint8Array<ArrayBuffer>),
      listed.map((i) => i + shift),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
