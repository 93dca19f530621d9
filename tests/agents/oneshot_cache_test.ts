/**
 * The one-shot CLI's caches (issue 11): prepared plugins on disk keyed by
 * bytes, limits and rewriter, checked on read; and the JS build index, which
 * skips the bundler while no file the bundle read has changed, and rebuilds
 * as soon as one has.
 */
import { deepStrictEqual as assertEquals, notStrictEqual, ok } from "node:assert/strict";
import { preparedFromDiskCache } from "../../src/adapters/deno/prepared_cache.ts";
import {
  MAX_RECENT,
  prefetchPrepared,
  takePrefetched,
} from "../../src/adapters/deno/prepared_prefetch.ts";
import { cachedPluginId, compileHook } from "../../src/compile/mod.ts";
import { denoFs } from "../../src/adapters/deno/fs.ts";
import { loadHook } from "../../src/hook/discover.ts";
import { fakeHook, hookMd } from "../_helpers.ts";
import { corpus, LIMITS } from "../runtime/wasm/_corpus.ts";

Deno.test("prepared plugins are cached on disk per bytes and limits; a corrupted entry is ignored", async () => {
  const dir = await Deno.makeTempDir({ prefix: "hookbox-prepared-" });
  try {
    const plugins: Record<string, Uint8Array> = {
      guard: await corpus("guard_wasi"),
      block: await corpus("block_wasi"),
    };
    let reads = 0;
    const load = preparedFromDiskCache(dir, (hook) => {
      reads++;
      return Promise.resolve(plugins[hook.name]!);
    });
    const hook = (name: string) =>
      fakeHook({ name }, { entry: { runtime: "wasm", format: "wasm", path: `/x/${name}.wasm` } });
    const first = await load(hook("guard"), LIMITS);
    const entries = () => [...Deno.readDirSync(`${dir}/prepared`)].map((e) => e.name).sort();
    assertEquals(entries().length, 2, "module and metadata");
    const again = await load(hook("guard"), LIMITS);
    assertEquals(again.instrumentedSha256, first.instrumentedSha256);
    assertEquals(entries().length, 2, "served from the entry");
    // Other limits or other bytes get their own entry.
    await load(hook("guard"), { ...LIMITS, memoryMb: LIMITS.memoryMb * 2 });
    const other = await load(hook("block"), LIMITS);
    notStrictEqual(other.sha256, first.sha256);
    assertEquals(entries().length, 6);
    // A damaged module is not used: it is prepared again and rewritten.
    const wasm = entries().filter((n) => n.endsWith(".wasm"));
    for (const name of wasm) {
      await Deno.writeFile(`${dir}/prepared/${name}`, new Uint8Array([0, 97, 115, 109]));
    }
    const repaired = await load(hook("guard"), LIMITS);
    assertEquals(repaired.instrumentedSha256, first.instrumentedSha256);
    ok(reads >= 5);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a JS hook is not re-bundled while its files are unchanged, and is as soon as one changes", async () => {
  const dir = await Deno.makeTempDir({ prefix: "hookbox-jsindex-" });
  try {
    const hookDir = `${dir}/hook`;
    await Deno.mkdir(`${hookDir}/scripts`, { recursive: true });
    await Deno.writeTextFile(`${hookDir}/HOOK.md`, hookMd({ name: "hook" }));
    await Deno.writeTextFile(`${hookDir}/scripts/lib.js`, `module.exports = { word: "one" };\n`);
    await Deno.writeTextFile(
      `${hookDir}/scripts/run.js`,
      `const { word } = require("./lib.js");\nconsole.log(word);\n`,
    );
    const cacheDir = `${dir}/cache`;
    const build = async () => compileHook(await loadHook(denoFs, hookDir, "project"), { cacheDir });
    const first = await build();
    assertEquals(first.cached, false);
    const indexes = [...Deno.readDirSync(cacheDir)].filter((e) => e.name.startsWith("js-index-"));
    assertEquals(indexes.length, 1);
    const index = JSON.parse(await Deno.readTextFile(`${cacheDir}/${indexes[0]!.name}`));
    assertEquals(
      index.inputs.map((i: { path: string }) => i.path.replace(/^.*\/scripts\//, "")).sort(),
      ["lib.js", "run.js"],
    );
    const second = await build();
    assertEquals([second.cached, second.sha256], [true, first.sha256]);
    // An edit to a file the bundle read (not the entry) gives a new plugin.
    await Deno.writeTextFile(`${hookDir}/scripts/lib.js`, `module.exports = { word: "two" };\n`);
    const third = await build();
    assertEquals(third.cached, false);
    notStrictEqual(third.sha256, first.sha256);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a JS hook whose sources are unchanged is loaded from the prepared cache without reading its plugin; an edit is seen", async () => {
  const dir = await Deno.makeTempDir({ prefix: "hookbox-alias-" });
  try {
    const hookDir = `${dir}/hook`;
    await Deno.mkdir(`${hookDir}/scripts`, { recursive: true });
    await Deno.writeTextFile(`${hookDir}/HOOK.md`, hookMd({ name: "hook" }));
    const write = (word: string) =>
      Deno.writeTextFile(`${hookDir}/scripts/run.js`, `console.log(${JSON.stringify(word)});\n`);
    await write("one");
    const cacheDir = `${dir}/cache`;
    let reads = 0;
    const load = preparedFromDiskCache(
      cacheDir,
      async (hook) => {
        reads++;
        return (await compileHook(hook, { cacheDir })).bytes;
      },
      (hook) => cachedPluginId(hook, { cacheDir }),
    );
    const hook = async () => await loadHook(denoFs, hookDir, "project");
    const JS_LIMITS = { ...LIMITS, moduleKb: 8192 };
    const first = await load(await hook(), JS_LIMITS);
    assertEquals(reads, 1, "the first load compiles and prepares");
    const aliases = () =>
      [...Deno.readDirSync(`${cacheDir}/prepared`)].filter((e) => e.name.startsWith("id-"));
    assertEquals(aliases().length, 1, "an alias names the entry");
    const again = await load(await hook(), JS_LIMITS);
    assertEquals(reads, 1, "served through the alias: the plugin is not read");
    assertEquals(again.instrumentedSha256, first.instrumentedSha256);
    // Other limits are another alias (and another entry).
    await load(await hook(), { ...JS_LIMITS, memoryMb: JS_LIMITS.memoryMb * 2 });
    assertEquals([reads, aliases().length], [2, 2]);
    // An edited source is another plugin: compiled, prepared, aliased again.
    await write("two");
    const edited = await load(await hook(), JS_LIMITS);
    assertEquals(reads, 3);
    notStrictEqual(edited.instrumentedSha256, first.instrumentedSha256);
    // A damaged alias is ignored: the plugin is read and the alias rewritten.
    for (const e of aliases()) {
      await Deno.writeTextFile(`${cacheDir}/prepared/${e.name}`, "../../x");
    }
    const repaired = await load(await hook(), JS_LIMITS);
    assertEquals([reads, repaired.instrumentedSha256], [4, edited.instrumentedSha256]);
    assertEquals(
      (await load(await hook(), JS_LIMITS)).instrumentedSha256,
      edited.instrumentedSha256,
    );
    assertEquals(reads, 4, "the rewritten alias serves again");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a one-shot run compiles the entries the last runs loaded ahead; a damaged one read ahead is not used", async () => {
  const dir = await Deno.makeTempDir({ prefix: "hookbox-prefetch-" });
  try {
    const plugins: Record<string, Uint8Array> = {
      guard: await corpus("guard_wasi"),
      block: await corpus("block_wasi"),
    };
    let reads = 0;
    const load = preparedFromDiskCache(dir, (hook) => {
      reads++;
      return Promise.resolve(plugins[hook.name]!);
    });
    const hook = (name: string) =>
      fakeHook({ name }, { entry: { runtime: "wasm", format: "wasm", path: `/x/${name}.wasm` } });
    const recent = () => JSON.parse(Deno.readTextFileSync(`${dir}/prepared-recent.json`));
    const guard = await load(hook("guard"), LIMITS);
    const [guardKey] = recent();
    await load(hook("block"), LIMITS);
    assertEquals(recent().length, 2);
    const [blockKey] = recent();
    assertEquals(recent()[1], guardKey, "most recent first");
    const base = `${dir}/prepared/${guardKey}`;
    // Read ahead, then taken by the loader: the module compiled ahead is the one served.
    prefetchPrepared(dir);
    const early = await takePrefetched(base);
    ok(early && early.sha256 === guard.instrumentedSha256);
    prefetchPrepared(dir);
    const served = await load(hook("guard"), LIMITS);
    assertEquals(takePrefetched(base), undefined, "the loader took it");
    assertEquals(served.instrumentedSha256, guard.instrumentedSha256);
    // A module read ahead that is not the entry's (valid, but other bytes) fails
    // its check: prepared again from the plugin.
    await Deno.copyFile(`${dir}/prepared/${blockKey}.wasm`, `${base}.wasm`);
    prefetchPrepared(dir);
    const repaired = await load(hook("guard"), LIMITS);
    assertEquals(repaired.instrumentedSha256, guard.instrumentedSha256);
    const rewritten = await crypto.subtle.digest("SHA-256", await Deno.readFile(`${base}.wasm`));
    assertEquals(
      Array.from(new Uint8Array(rewritten), (b) => b.toString(16).padStart(2, "0")).join(""),
      guard.instrumentedSha256,
      "the entry was prepared and written again",
    );
    // A list that is not one is ignored; a long one is cut to MAX_RECENT.
    for (const text of ["{", '"x"', JSON.stringify(["../../etc/passwd"]), "[1,2]"]) {
      await Deno.writeTextFile(`${dir}/prepared-recent.json`, text);
      prefetchPrepared(dir);
      assertEquals(takePrefetched(base), undefined, text);
    }
    await Deno.writeTextFile(
      `${dir}/prepared-recent.json`,
      JSON.stringify(Array.from({ length: 20 }, (_, i) => i.toString(16).padStart(64, "0"))),
    );
    prefetchPrepared(dir); // as a new process would
    await load(hook("block"), LIMITS);
    assertEquals(recent().length, MAX_RECENT);
    assertEquals(recent()[0], blockKey);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
