/**
 * Discovery remembered on disk between processes (packages/deno/scan_cache.ts):
 * a stored scan is used only while every path discovery looked at is
 * unchanged, and every kind of change a user makes to a hook folder is seen
 * by the next process.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { denoFs } from "../../../packages/host-deno/fs.ts";
import {
  cachedScan,
  forgetScans,
  KEPT_BYTES,
  keptScans,
} from "../../../packages/deno/scan_cache.ts";
import { type Discovery, scanPath } from "../../../packages/core/hook/discover.ts";
import type { HookLevel } from "../../../packages/core/hook/types.ts";
import { createExecutor } from "../../../packages/hookbox/deno.ts";
import { sh, tempTree, WASM_STUB } from "../../_helpers.ts";

/** A cached scanner as a new process would build it, counting real scans. */
function scanner(cacheDir: string, racyMs = 0) {
  forgetScans();
  const counter = { scans: 0 };
  const scan = async (dir: string, level: HookLevel) => {
    // A scan starts strictly after the writes before it (time stamps are in ms).
    await new Promise((r) => setTimeout(r, 5));
    return await cachedScan(cacheDir, denoFs, (fs, d, l) => {
      counter.scans++;
      return scanPath(fs, d, l);
    }, { racyMs })(dir, level);
  };
  return { scan, counter };
}

const summary = (d: Discovery) => ({
  hooks: d.hooks.map((h) => `${h.name}:${h.entry.runtime}:${h.manifest.priority}`),
  problems: d.problems.map((p) => `${p.code}:${p.path.split("/").pop()}`),
});

Deno.test("a stored scan is served again, and every change to the folder is seen at once", async () => {
  await using tree = await tempTree();
  const hooks = await tree.dir("hooks");
  const cache = `${tree.root}/cache`;
  await tree.hook("hooks", "alpha", { frontmatter: { priority: 10 }, files: WASM_STUB });
  await tree.hook("hooks", "beta", { files: { "scripts/run": "#!/bin/sh\n" } });
  const { scan, counter } = scanner(cache);
  const expectScan = async (expected: ReturnType<typeof summary>, scans: number, why: string) => {
    assertEquals(summary(await scan(hooks, "project")), expected, why);
    assertEquals(counter.scans, scans, why);
  };
  const base = {
    hooks: ["alpha:wasm:10"],
    problems: ["HOOK_ENTRY_MISSING:run"],
  };
  await expectScan(base, 1, "first scan");
  await expectScan(base, 1, "served from the entry");

  // HOOK.md edited.
  await tree.hook("hooks", "alpha", { frontmatter: { priority: 200 }, files: WASM_STUB });
  const edited = { ...base, hooks: ["alpha:wasm:200"] };
  await expectScan(edited, 2, "edited HOOK.md");
  await expectScan(edited, 2, "stored again");

  // A mode change: scripts/run becomes executable, so beta is now a hook.
  await Deno.chmod(`${hooks}/beta/scripts/run`, 0o755);
  const executable = { hooks: ["alpha:wasm:200", "beta:subprocess:100"], problems: [] };
  await expectScan(executable, 3, "chmod +x scripts/run");

  // A file that takes precedence appears: beta's plugin.wasm beats scripts/run.
  await Deno.writeTextFile(`${hooks}/beta/plugin.wasm`, "");
  const wasmFirst = { hooks: ["alpha:wasm:200", "beta:wasm:100"], problems: [] };
  await expectScan(wasmFirst, 4, "plugin.wasm added");

  // A hook folder added, then one removed.
  await tree.hook("hooks", "gamma", { files: { "scripts/run.sh": sh("exit 0") } });
  await expectScan(
    { hooks: [...wasmFirst.hooks, "gamma:subprocess:100"], problems: [] },
    5,
    "folder added",
  );
  await Deno.remove(`${hooks}/alpha`, { recursive: true });
  await expectScan(
    { hooks: ["beta:wasm:100", "gamma:subprocess:100"], problems: [] },
    6,
    "folder removed",
  );
});

Deno.test("a platform hook linked from elsewhere is rescanned when the link is pointed at another folder", async () => {
  await using tree = await tempTree();
  const platform = await tree.dir("platform");
  await tree.hook("one", "guard", { frontmatter: { priority: 1 }, files: WASM_STUB });
  await tree.hook("two", "guard", { frontmatter: { priority: 2 }, files: WASM_STUB });
  await Deno.symlink(`${tree.root}/one/guard`, `${platform}/guard`);
  const { scan, counter } = scanner(`${tree.root}/cache`);
  assertEquals(summary(await scan(platform, "platform")).hooks, ["guard:wasm:1"]);
  assertEquals(summary(await scan(platform, "platform")).hooks, ["guard:wasm:1"]);
  assertEquals(counter.scans, 1);
  await Deno.remove(`${platform}/guard`);
  await Deno.symlink(`${tree.root}/two/guard`, `${platform}/guard`);
  assertEquals(summary(await scan(platform, "platform")).hooks, ["guard:wasm:2"]);
  assertEquals(counter.scans, 2);
});

Deno.test("a missing entry file is looked for again where its folder changed, or it is a link to nothing", async () => {
  await using tree = await tempTree();
  const hooks = await tree.dir("hooks");
  const alpha = await tree.hook("hooks", "alpha", {
    files: { "scripts/run.mjs": "export default () => {};\n" },
  });
  await Deno.mkdir(`${alpha}/build`);
  // plugin.wasm (which takes precedence over scripts/run.mjs) is a link to a file not built yet.
  await Deno.symlink("build/out.wasm", `${alpha}/plugin.wasm`);
  const { scan, counter } = scanner(`${tree.root}/cache`);
  const format = async () =>
    (await scan(hooks, "project")).hooks.map((h) =>
      h.entry.runtime === "wasm" ? h.entry.format : h.entry.runtime
    );
  assertEquals(await format(), ["js"]);
  assertEquals(await format(), ["js"], "served from the entry");
  assertEquals(counter.scans, 1);
  // Building it changes build/, not the hook's folder: the link is followed again all the same.
  await Deno.writeFile(`${alpha}/build/out.wasm`, new Uint8Array());
  assertEquals(await format(), ["wasm"], "the built plugin.wasm");
  assertEquals(counter.scans, 2);
  // A file added where discovery found none changes its folder's time: seen at once.
  await Deno.remove(`${alpha}/plugin.wasm`);
  assertEquals(await format(), ["js"]);
  await Deno.mkdir(`${alpha}/scripts/x`);
  await Deno.remove(`${alpha}/scripts/run.mjs`);
  await Deno.writeTextFile(`${alpha}/scripts/run.js`, "export default () => {};\n");
  assertEquals(await format(), ["js"]);
  ok(counter.scans >= 4, `${counter.scans}`);
  // A hooks folder whose parents are missing too (a user who has none yet) is seen once made.
  const user = `${tree.root}/config/agents/hooks`;
  assertEquals((await scan(user, "user")).hooks, []);
  assertEquals((await scan(user, "user")).hooks, [], "served from the entry");
  await tree.hook("config/agents/hooks", "mine", { files: WASM_STUB });
  assertEquals((await scan(user, "user")).hooks.map((h) => h.name), ["mine"]);
});

Deno.test("the entries a process keeps in memory stay under their byte cap, however big the HOOK.md files", async () => {
  // Source: the daemon keeps scan entries between calls; a dozen repositories' folders of 15
  // HOOK.md files with 60 KB bodies (HOOK.md's cap is 64 KiB, a folder's 1 MiB) would have been
  // held whole (64 entries of up to 1 MiB of manifests each).
  await using tree = await tempTree();
  const { scan, counter } = scanner(`${tree.root}/cache`);
  const body = "x".repeat(60_000);
  const folders = [];
  for (let i = 0; i < 12; i++) {
    for (let j = 0; j < 15; j++) await tree.hook(`repo${i}`, `big${j}`, { files: WASM_STUB, body });
    folders.push(`${tree.root}/repo${i}`);
  }
  for (const folder of folders) {
    const { hooks, problems } = await scan(folder, "project");
    assertEquals([hooks.length, problems.length], [15, 0]);
  }
  const { entries, bytes } = keptScans();
  ok(bytes <= KEPT_BYTES, `${bytes} bytes kept`);
  ok(entries >= 1 && entries < folders.length, `${entries} entries kept`);
  // The folders let go of are read from their entries again, not scanned.
  for (const folder of folders) await scan(folder, "project");
  assertEquals(counter.scans, folders.length);
});

Deno.test("a folder changed just before the scan is not stored; a damaged entry is scanned again", async () => {
  await using tree = await tempTree();
  const hooks = await tree.dir("hooks");
  await tree.hook("hooks", "alpha", { files: WASM_STUB });
  const cache = `${tree.root}/cache`;
  // The default window: everything here was written a moment ago.
  const racy = scanner(cache, 2000);
  await racy.scan(hooks, "project");
  await racy.scan(hooks, "project");
  assertEquals(racy.counter.scans, 2, "nothing stored for files this fresh");
  ok(!(await Deno.stat(`${cache}/scans`).catch(() => null)), "no entry written");

  let { scan, counter } = scanner(cache);
  await scan(hooks, "project");
  const [entry] = [...Deno.readDirSync(`${cache}/scans`)];
  await Deno.writeTextFile(`${cache}/scans/${entry!.name}`, "{ not json");
  // This process keeps the entry it wrote while it holds; a new one reads the damaged file.
  await scan(hooks, "project");
  assertEquals(counter.scans, 1, "kept in this process");
  ({ scan, counter } = scanner(cache));
  counter.scans = 1;
  assertEquals(summary(await scan(hooks, "project")).hooks, ["alpha:wasm:100"]);
  assertEquals(counter.scans, 2);
  // An entry written by other discovery code (another hookbox version) is not used.
  await scan(hooks, "project");
  assertEquals(counter.scans, 2, "stored again");
  const path = `${cache}/scans/${entry!.name}`;
  const stored = JSON.parse(await Deno.readTextFile(path));
  await Deno.writeTextFile(path, JSON.stringify({ ...stored, code: "0".repeat(64) }));
  forgetScans();
  await scan(hooks, "project");
  assertEquals(counter.scans, 3, "rescanned: written by other code");
  // The same folder at another level is another entry.
  await scan(hooks, "user");
  assertEquals(counter.scans, 4);
  // An entry records its folder: one found under another folder's name (a
  // stray copy, a hash collision) is not that folder's discovery.
  const other = await tree.dir("other");
  await scan(other, "project");
  assertEquals(counter.scans, 5);
  const otherEntry = [...Deno.readDirSync(`${cache}/scans`)].find((e) =>
    JSON.parse(Deno.readTextFileSync(`${cache}/scans/${e.name}`)).dir === other
  )!;
  await Deno.writeTextFile(`${cache}/scans/${otherEntry.name}`, await Deno.readTextFile(path));
  forgetScans();
  assertEquals(summary(await scan(other, "project")).hooks, [], "not alpha's folder");
  assertEquals(counter.scans, 6);
});

Deno.test("hookbox's executor with scanCache sees a HOOK.md edited between two processes", async () => {
  await using tree = await tempTree();
  const hooks = await tree.dir("hooks");
  // The hook always blocks; its matcher decides whether a Bash call reaches it.
  const write = (tool: string) =>
    tree.hook("hooks", "gate", {
      frontmatter: { trigger: "pre-tool-call", matcher: { tool } },
      files: { "scripts/run.sh": sh("echo no >&2; exit 2") },
    });
  await write("^Read$");
  // Past the racy window, so the first process stores its scan.
  await new Promise((r) => setTimeout(r, 2100));
  const event = { event_type: "pre-tool-call", session_id: "s", tool_name: "Bash", tool_input: {} };
  const dispatch = async () => {
    const executor = createExecutor({
      platformDirs: [hooks],
      userDir: null,
      projectDir: null,
      allowSubprocess: true,
      cacheDir: `${tree.root}/cache`,
      scanCache: true,
    });
    try {
      return (await executor.dispatch(event)).decision;
    } finally {
      await executor.close();
    }
  };
  assertEquals(await dispatch(), "allow");
  ok([...Deno.readDirSync(`${tree.root}/cache/scans`)].length >= 1, "the scan was stored");
  assertEquals(await dispatch(), "allow");
  await write("^(Bash|Read)$");
  assertEquals(await dispatch(), "block", "the edit is seen by the next process");
});

Deno.test("a hooks folder under many missing folders is remembered by its own folder, not each parent", async () => {
  await using tree = await tempTree();
  const cache = `${tree.root}/cache`;
  // 1,000 missing levels under an existing folder (a payload's `cwd` can name any such path, up to
  // 4,096 characters); the cache is outside that folder, so writing an entry changes nothing signed.
  const under = await tree.dir("projects");
  const deep = `${under}/${"a/".repeat(1_000)}.agents/hooks`;
  const { scan, counter } = scanner(cache);
  assertEquals((await scan(deep, "project")).hooks, []);
  assertEquals((await scan(deep, "project")).hooks, [], "served from the entry");
  assertEquals(counter.scans, 1);
  let bytes = 0;
  for (const entry of Deno.readDirSync(`${cache}/scans`)) {
    bytes += Deno.statSync(`${cache}/scans/${entry.name}`).size;
  }
  // Each missing parent's path kept is a megabyte here; the folder and its own folder, 4 KB.
  ok(bytes < 64 * 1024, `${bytes} bytes of entries`);
  // Made after all: seen at once.
  await tree.hook(`projects/${"a/".repeat(1_000)}.agents/hooks`, "late", { files: WASM_STUB });
  assertEquals((await scan(deep, "project")).hooks.map((h) => h.name), ["late"]);
});
