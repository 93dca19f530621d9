/**
 * The one-shot CLI's caches (issue 11): prepared plugins on disk keyed by
 * bytes, limits and rewriter, checked on read; and the JS build index, which
 * skips the bundler while no file the bundle read has changed, and rebuilds
 * as soon as one has.
 */
import { deepStrictEqual as assertEquals, notStrictEqual, ok } from "node:assert/strict";
import { preparedFromDiskCache } from "../../packages/deno/prepared_cache.ts";
import {
  eventContext,
  MAX_CONTEXTS,
  prefetchPrepared,
  readPrepared,
  takePrefetched,
} from "../../packages/deno/prepared_prefetch.ts";
import { cachedPluginId, compileHook } from "../../packages/compile/mod.ts";
import { denoFs } from "../../packages/host-deno/fs.ts";
import { loadHook } from "../../packages/core/hook/discover.ts";
import { fakeHook, hookMd, tempDir } from "../_helpers.ts";
import { corpus, LIMITS, request } from "../runtime-wasm/_corpus.ts";
import { createWasmRuntime } from "../../packages/runtime-wasm/mod.ts";

/** The disk cache in `dir` over two corpus plugins, `guard` and `block`, counting reads of them. */
async function corpusLoader(dir: string) {
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
  return { load, hook, reads: () => reads };
}

Deno.test("prepared plugins are cached on disk per bytes and limits; a corrupted entry is ignored", async () => {
  const dir = await tempDir("hookbox-prepared-");
  try {
    const { load, hook, reads } = await corpusLoader(dir);
    const first = await load(hook("guard"), LIMITS);
    const entries = () => [...Deno.readDirSync(`${dir}/prepared`)].map((e) => e.name).sort();
    assertEquals(entries().length, 2, "module and metadata");
    const again = await load(hook("guard"), LIMITS);
    assertEquals(again.instrumentedSha256, first.instrumentedSha256);
    assertEquals(entries().length, 2, "served from the entry");
    // The same loader (a daemon's, call after call) keeps the compiled module while the
    // entry's files are unchanged.
    ok(again.module === first.module, "the kept module");
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
    ok(repaired.module !== first.module, "a changed entry is read and checked again");
    ok(reads() >= 5);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a JS hook is not re-bundled while its files are unchanged, and is as soon as one changes", async () => {
  const dir = await tempDir("hookbox-jsindex-");
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
  const dir = await tempDir("hookbox-alias-");
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

Deno.test("a plugin's id is kept while its files keep their signatures, and an edit of any of them is seen", async () => {
  // The daemon asks for the same ids on every call: it keeps them instead of reading and hashing
  // every source again, and must still see an edit of a file the hook only imports.
  const dir = await tempDir("hookbox-ids-");
  try {
    const hookDir = `${dir}/hook`;
    await Deno.mkdir(`${hookDir}/scripts`, { recursive: true });
    await Deno.writeTextFile(`${hookDir}/HOOK.md`, hookMd({ name: "hook" }));
    await Deno.writeTextFile(
      `${hookDir}/scripts/run.js`,
      'import { word } from "./word.js";\nconsole.log(word);\n',
    );
    const lib = `${hookDir}/scripts/word.js`;
    await Deno.writeTextFile(lib, 'export const word = "one";\n');
    const cacheDir = `${dir}/cache`;
    const hook = await loadHook(denoFs, hookDir, "project");
    await compileHook(hook, { cacheDir });
    // Files changed in the last two seconds are not trusted to their signatures (coarse time
    // stamps): let them age past that.
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const id = await cachedPluginId(hook, { cacheDir });
    ok(id?.startsWith("js:"), String(id));
    assertEquals(await cachedPluginId(hook, { cacheDir }), id, "the same id again");
    // The imported file edited (same size): the index no longer matches, so no id is known.
    await Deno.writeTextFile(lib, 'export const word = "two";\n');
    assertEquals(await cachedPluginId(hook, { cacheDir }), null);
    const rebuilt = await compileHook(hook, { cacheDir });
    ok(!rebuilt.cached, "built again");
    const next = await cachedPluginId(hook, { cacheDir });
    ok(next !== null && next !== id, `${next} after ${id}`);
    // The compiled plugin removed from the cache: not known any more.
    await Deno.remove(`${cacheDir}/js-${next!.slice(3)}.wasm`);
    assertEquals(await cachedPluginId(hook, { cacheDir }), null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a one-shot run compiles ahead what the last run of its kind of event loaded; a wrong module read ahead is not used", async () => {
  const dir = await tempDir("hookbox-prefetch-");
  try {
    const { load, hook } = await corpusLoader(dir);
    const recorded = () => JSON.parse(Deno.readTextFileSync(`${dir}/prepared-recent.json`));
    // A process that never asked for a prefetch records nothing.
    await load(hook("guard"), LIMITS);
    assertEquals([...Deno.readDirSync(dir)].some((e) => e.name.includes("recent")), false);
    // A run of kind A loads guard then block: recorded in that order.
    prefetchPrepared(dir, "A");
    const guard = await load(hook("guard"), LIMITS);
    const block = await load(hook("block"), LIMITS);
    const [guardKey, blockKey] = recorded().A;
    const base = (key: string) => `${dir}/prepared/${key}`;
    // The next run of kind A has both compiled ahead, and the loader takes them.
    prefetchPrepared(dir, "A");
    const early = await takePrefetched(base(guardKey));
    ok(early && early.meta.instrumentedSha256 === guard.instrumentedSha256);
    await load(hook("guard"), LIMITS);
    const again = await load(hook("block"), LIMITS);
    assertEquals(takePrefetched(base(blockKey)), undefined, "the loader took it");
    assertEquals(again.instrumentedSha256, block.instrumentedSha256);
    // Kind B compiles nothing of A's, and gets its own list.
    prefetchPrepared(dir, "B");
    assertEquals(takePrefetched(base(guardKey)), undefined);
    await load(hook("block"), LIMITS);
    assertEquals(recorded(), { A: [guardKey, blockKey], B: [blockKey] });
    // A module read ahead that is not the entry's (valid, other bytes) fails its
    // check: the entry is prepared and written again.
    await Deno.copyFile(`${base(blockKey)}.wasm`, `${base(guardKey)}.wasm`);
    prefetchPrepared(dir, "A");
    const repaired = await load(hook("guard"), LIMITS);
    assertEquals(repaired.instrumentedSha256, guard.instrumentedSha256);
    const rewritten = await crypto.subtle.digest(
      "SHA-256",
      await Deno.readFile(`${base(guardKey)}.wasm`),
    );
    assertEquals(
      Array.from(new Uint8Array(rewritten), (b) => b.toString(16).padStart(2, "0")).join(""),
      guard.instrumentedSha256,
      "the entry was prepared and written again",
    );
    // Lists that are not lists are ignored; the file keeps at most MAX_CONTEXTS kinds.
    for (const text of ["{", '"x"', "[]", JSON.stringify({ A: ["../../etc/passwd", 1] })]) {
      await Deno.writeTextFile(`${dir}/prepared-recent.json`, text);
      prefetchPrepared(dir, "A");
      assertEquals(takePrefetched(base(guardKey)), undefined, text);
    }
    const many = Object.fromEntries(
      Array.from({ length: MAX_CONTEXTS + 8 }, (_, i) => [`k${i}`, [guardKey]]),
    );
    await Deno.writeTextFile(`${dir}/prepared-recent.json`, JSON.stringify(many));
    prefetchPrepared(dir, "C");
    await load(hook("guard"), LIMITS);
    const kinds = Object.keys(recorded());
    assertEquals([kinds.length, kinds.at(-1)], [MAX_CONTEXTS, "C"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** A JS hook `name` in `dir` that prints `word`, loaded as discovery loads it. */
async function printingHook(dir: string, name: string, word: string) {
  await Deno.mkdir(`${dir}/${name}/scripts`, { recursive: true });
  await Deno.writeTextFile(`${dir}/${name}/HOOK.md`, hookMd({ name }));
  await Deno.writeTextFile(`${dir}/${name}/scripts/run.js`, `console.log("${word}");\n`);
  return await loadHook(denoFs, `${dir}/${name}`, "project");
}

/** The disk cache's loader of a one-shot process, JS hooks that run fresh sharing one module. */
function sharedLoader(cacheDir: string) {
  return preparedFromDiskCache(
    cacheDir,
    async (hook) => (await compileHook(hook, { cacheDir })).bytes,
    (hook) => cachedPluginId(hook, { cacheDir }),
    { shareCode: true },
  );
}

/** Limits a JS hook's engine module fits in. */
const JS_LIMITS = { ...LIMITS, moduleKb: 8192 };

Deno.test("JS hooks that run fresh share one engine module through the disk cache; a damaged image is refused", async () => {
  // Source: a one-shot call with two JS hooks compiled the QuickJS engine twice (15–20 ms each
  // on its one compile thread); with the module shared it is compiled once.
  const dir = await tempDir("hookbox-shared-");
  try {
    const cacheDir = `${dir}/cache`;
    const one = await printingHook(dir, "one", "first");
    const two = await printingHook(dir, "two", "second");
    const loader = () => sharedLoader(cacheDir);
    const load = loader();
    const [a, b] = [await load(one, JS_LIMITS, "fresh"), await load(two, JS_LIMITS, "fresh")];
    assertEquals(a.instrumentedSha256, b.instrumentedSha256, "one module for both");
    notStrictEqual(a.sha256, b.sha256);
    ok(a.image !== undefined && b.image !== undefined, "each its own memory image");
    const runsFiles = () =>
      [...Deno.readDirSync(`${cacheDir}/prepared`)].filter((e) => e.name.endsWith(".runs"));
    assertEquals(runsFiles().length, 2);
    // Read back by another loader (another process): one compiled module, each hook its answer.
    const again = loader();
    const runtime = createWasmRuntime({
      loadBytes: () => Promise.reject(new Error("not read")),
      loadPrepared: again,
      warmBytes: 0,
    });
    try {
      const answers = [];
      for (const hook of [one, two]) {
        const result = await runtime.run(request(hook, undefined, JS_LIMITS));
        answers.push([result.exitCode, result.stdout]);
      }
      assertEquals(answers, [[0, "first\n"], [0, "second\n"]]);
      const [ra, rb] = [await again(one, JS_LIMITS, "fresh"), await again(two, JS_LIMITS, "fresh")];
      ok(ra.module === rb.module, "compiled once in this process");
      // A damaged image is not used: the entry is prepared again and answers as before.
      for (const e of runsFiles()) {
        const path = `${cacheDir}/prepared/${e.name}`;
        const bytes = Deno.readFileSync(path);
        bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0xff;
        Deno.writeFileSync(path, bytes);
      }
      const fresh = createWasmRuntime({
        loadBytes: () => Promise.reject(new Error("not read")),
        loadPrepared: loader(),
        warmBytes: 0,
      });
      const repaired = await fresh.run(request(one, undefined, JS_LIMITS));
      assertEquals([repaired.exitCode, repaired.stdout], [0, "first\n"]);
      await fresh.close?.();
    } finally {
      await runtime.close?.();
    }
    // A hook run warm keeps its own module (write tracking needs the memory in the module).
    const warm = await load(one, JS_LIMITS, "warm");
    assertEquals(warm.image, undefined);
    notStrictEqual(warm.instrumentedSha256, a.instrumentedSha256);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a module this process compiled is not read again for another JS hook's entry", async () => {
  // Source: a one-shot call with two JS hooks read the 1.1 MB engine module twice, once per
  // entry, although it compiled it once.
  const dir = await tempDir("hookbox-shared-read-");
  try {
    const cacheDir = `${dir}/cache`;
    const load = sharedLoader(cacheDir);
    for (const [name, word] of [["one", "first"], ["two", "second"]]) {
      await load(await printingHook(dir, name!, word!), JS_LIMITS, "fresh");
    }
    const bases = [...Deno.readDirSync(`${cacheDir}/prepared`)]
      .filter((e) => e.name.endsWith(".runs"))
      .map((e) => `${cacheDir}/prepared/${e.name.slice(0, -5)}`);
    assertEquals(bases.length, 2);
    // Old enough to be trusted by their signatures from now on (checked once more, recorded).
    for (const base of bases) ok(await readPrepared(base, { racyMs: 0 }));
    // In another process: the first entry's module is read and compiled, the second's is not read.
    const modules = await new Deno.Command(Deno.execPath(), {
      args: [
        "eval",
        "--config",
        new URL("../../deno.json", import.meta.url).pathname,
        `
        import { readPrepared } from ${
          JSON.stringify(new URL("../../packages/deno/prepared_prefetch.ts", import.meta.url).href)
        };
        const reads = [];
        const readFileSync = Deno.readFileSync;
        Deno.readFileSync = (path, ...rest) => (reads.push(String(path)), readFileSync(path, ...rest));
        const [a, b] = [await readPrepared(${JSON.stringify(bases[0])}), await readPrepared(${
          JSON.stringify(bases[1])
        })];
        console.log(JSON.stringify({
          same: a.module === b.module,
          images: [a.meta.image !== undefined, b.meta.image !== undefined],
          wasm: reads.filter((p) => p.endsWith(".wasm")).map((p) => p.split("/").pop()),
        }));
      `,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(modules.stdout);
    assertEquals(modules.code, 0, new TextDecoder().decode(modules.stderr));
    assertEquals(JSON.parse(text), {
      same: true,
      images: [true, true],
      wasm: [`${bases[0]!.split("/").pop()}.wasm`],
    });
    // A second entry whose file changed since its check is read (and hashed) as before.
    Deno.utimeSync(`${bases[1]}.wasm`, new Date(0), new Date(0));
    const again = await readPrepared(bases[1]!, { racyMs: 60_000 });
    ok(again !== null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a prepared module is hashed until its file is old enough, then trusted by its signature until it changes", async () => {
  const dir = await tempDir("hookbox-verified-");
  let digests = 0;
  const subtle = crypto.subtle as { digest: SubtleCrypto["digest"] };
  const digest = subtle.digest;
  subtle.digest = (...args) => {
    digests++;
    return digest.apply(crypto.subtle, args);
  };
  try {
    const { load, hook } = await corpusLoader(dir);
    const guard = await load(hook("guard"), LIMITS);
    const block = await load(hook("block"), LIMITS);
    const files = [...Deno.readDirSync(`${dir}/prepared`)].map((e) => e.name);
    const base = (sha: string) => {
      const json = files.find((n) =>
        n.endsWith(".json") &&
        JSON.parse(Deno.readTextFileSync(`${dir}/prepared/${n}`)).instrumentedSha256 === sha
      )!;
      return `${dir}/prepared/${json.slice(0, -5)}`;
    };
    const guardBase = base(guard.instrumentedSha256);
    const meta = () => JSON.parse(Deno.readTextFileSync(`${guardBase}.json`));
    const read = async (racyMs: number) => {
      const before = digests;
      const entry = await readPrepared(guardBase, { racyMs });
      return { sha: entry?.meta.instrumentedSha256 ?? null, hashed: digests - before };
    };
    // Just written: checked by hash, and too new to be trusted by its signature.
    assertEquals(await read(60_000), { sha: guard.instrumentedSha256, hashed: 1 });
    assertEquals(meta().verified, undefined);
    // Old enough: checked once more, and its signature recorded; then trusted without hashing.
    assertEquals(await read(0), { sha: guard.instrumentedSha256, hashed: 1 });
    ok(typeof meta().verified === "string");
    assertEquals(await read(0), { sha: guard.instrumentedSha256, hashed: 0 });
    // A changed file (here its times only, the bytes the same) is hashed again...
    Deno.utimeSync(`${guardBase}.wasm`, new Date(0), new Date(0));
    assertEquals(await read(60_000), { sha: guard.instrumentedSha256, hashed: 1 });
    // ...and other bytes (a valid module, another entry's) are refused.
    await Deno.copyFile(`${base(block.instrumentedSha256)}.wasm`, `${guardBase}.wasm`);
    assertEquals(await read(0), { sha: null, hashed: 1 });
    // A signature planted in the metadata is only trusted if the file has it.
    await Deno.writeTextFile(
      `${guardBase}.json`,
      JSON.stringify({ ...meta(), verified: "1:2:3:4:5" }),
    );
    assertEquals((await read(0)).sha, null);
    // The loader rejects the damaged entry and prepares it again.
    assertEquals((await load(hook("guard"), LIMITS)).instrumentedSha256, guard.instrumentedSha256);
    assertEquals((await read(60_000)).sha, guard.instrumentedSha256);
  } finally {
    subtle.digest = digest;
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the kind of event a dispatch command line is about", () => {
  const claude = JSON.stringify({
    session_id: "s",
    cwd: "/home/a/project",
    hook_event_name: "PreToolUse",
    tool_name: "x",
  });
  const args = ["--agent", "claude-code", "--hooks-dir", "/h1", "--hooks-dir=/h2"];
  assertEquals(eventContext(args, claude), "claude-code||/h1,/h2||PreToolUse|/home/a/project");
  assertEquals(
    eventContext(["--event=pre-tool-call"], '{"event_type":"pre_tool_call"}'),
    "|pre-tool-call|||pre_tool_call|",
  );
  assertEquals(eventContext([], "not json"), "|||||");
  ok(eventContext(["--hooks-dir", "x".repeat(5000)], claude).length < 1024);
  // Hostile input: huge, field names repeated without values, a path too long to name.
  const hostile = '{"event_type":'.repeat(200_000) + `"cwd":"/${"d".repeat(10_000)}"}`;
  const named = eventContext(["--agent", "claude-code"], hostile);
  assertEquals(named, "claude-code|||||");
  ok(eventContext([], '{"cwd":"' + "x".repeat(1_000_000)).length < 1024);
});

Deno.test("the disk cache remembers the plugins it loaded without holding them alive", async () => {
  // The runtime's kept plugins (`keptPluginBytes`) are what holds a loaded plugin; the cache held
  // its last 64 as well, a repository's 4 MiB plugins ~11 MB each, past the runtime's cap.
  const dir = await tempDir("hookbox-prepared-weak-");
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "--v8-flags=--expose-gc",
        new URL("./_prepared_weak_probe.ts", import.meta.url).pathname,
        dir,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
    assertEquals(JSON.parse(new TextDecoder().decode(out.stdout)), { alive: [false, false] });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
