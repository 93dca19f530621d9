/**
 * Hostile repository files: an oversized HOOK.md, unknown manifest fields,
 * symbolic links out of a hook folder, and folders with too many hooks. Each
 * is reported as a coded problem before anything is parsed or compiled, and
 * the other hooks still load.
 */
import assert from "node:assert/strict";
import { denoFs } from "../../../packages/host-deno/fs.ts";
import { scanPath } from "../../../packages/core/hook/discover.ts";
import {
  MAX_FLOW_DEPTH,
  MAX_FRONTMATTER_CHARS,
  parseHookMd,
} from "../../../packages/core/hook/frontmatter.ts";
import {
  MAX_FOLDER_MANIFEST_CHARS,
  MAX_FOLDER_MATCHER_INSTRUCTIONS,
  MAX_HOOKS_PER_FOLDER,
  MAX_MANIFEST_BYTES,
} from "../../../packages/core/hook/files.ts";
import { compileHook } from "../../../packages/compile/mod.ts";
import { isHookboxError } from "../../../packages/core/errors.ts";
import { tempTree, WASM_STUB } from "../../_helpers.ts";

const stub = { files: WASM_STUB };

Deno.test("`scanPath()` refuses a HOOK.md over the size cap without parsing it", async () => {
  await using tree = await tempTree();
  const dir = await tree.dir("project/bomb");
  // Source of the attack: megabytes of YAML, enough to exhaust the heap when parsed.
  const yaml = `name: bomb\ndescription: d\ntrigger: pre-tool-call\nx: [${"[1,".repeat(400_000)}`;
  await Deno.writeTextFile(`${dir}/HOOK.md`, `---\n${yaml}\n---\n`);
  await Deno.writeFile(`${dir}/plugin.wasm`, new Uint8Array(8));
  await tree.hook("project", "fine", stub);
  const found = await scanPath(denoFs, `${tree.root}/project`, "project");
  assert.deepEqual(found.hooks.map((h) => h.name), ["fine"]);
  assert.equal(found.problems[0]?.code, "HOOK_FILE_TOO_LARGE");
  assert.match(found.problems[0]?.message ?? "", new RegExp(`${MAX_MANIFEST_BYTES}-byte cap`));
});

Deno.test("`parseHookMd()` refuses frontmatter over its cap and repeated keys, in linear time", () => {
  // Source of the attack: a 50 KB frontmatter of distinct keys. The YAML
  // library's duplicate-key check is quadratic: half a second per HOOK.md.
  const keys = Array.from({ length: 6000 }, (_, i) => `k${i}: 1`).join("\n");
  assert.throws(
    () => parseHookMd(`---\nname: a\n${keys}\n---\n`),
    (err) =>
      isHookboxError(err, "HOOK_MANIFEST_INVALID") &&
      err.message.includes(`over the ${MAX_FRONTMATTER_CHARS} cap`),
  );
  // Repeated keys are still refused, at any level, now by hookbox's own check.
  const fm = "name: a\ndescription: d\ntrigger: pre-tool-call\nlimits:\n  fuel: 1\n  fuel: 2\n";
  assert.throws(
    () => parseHookMd(`---\n${fm}---\n`),
    (err) =>
      isHookboxError(err, "HOOK_MANIFEST_INVALID") && /repeats the key "fuel"/.test(err.message),
  );
  assert.throws(
    () => parseHookMd("---\nname: a\nname: b\ndescription: d\ntrigger: pre-tool-call\n---\n"),
    /repeats the key "name"/,
  );
  // Under the cap, many keys parse (and fail the schema, not the parser).
  const some = Array.from({ length: 1000 }, (_, i) => `k${i}: 1`).join("\n");
  assert.throws(
    () => parseHookMd(`---\nname: a\ndescription: d\ntrigger: pre-tool-call\n${some}\n---\n`),
    (err) => isHookboxError(err, "HOOK_MANIFEST_INVALID") && /k0/.test(err.message),
  );
});

Deno.test("`scanPath()` refuses unknown top-level manifest fields, naming them", async () => {
  await using tree = await tempTree();
  const dir = await tree.dir("project/typo");
  const fm = "name: typo\ndescription: d\ntrigger: pre-tool-call\ntimout: 100\n";
  await Deno.writeTextFile(`${dir}/HOOK.md`, `---\n${fm}---\n`);
  await Deno.writeFile(`${dir}/plugin.wasm`, new Uint8Array(8));
  const found = await scanPath(denoFs, `${tree.root}/project`, "project");
  assert.equal(found.problems[0]?.code, "HOOK_MANIFEST_INVALID");
  assert.match(found.problems[0]?.message ?? "", /timout/);
});

Deno.test("`scanPath()` refuses a project hook whose scripts/ links into the repository", async () => {
  await using tree = await tempTree();
  await Deno.writeTextFile(`${tree.root}/project/.env`, "SECRET=1").catch(async () => {
    await tree.dir("project");
    await Deno.writeTextFile(`${tree.root}/project/.env`, "SECRET=1");
  });
  await Deno.writeTextFile(`${tree.root}/project/run.js`, 'console.log(require("./.env"));');
  const dir = await tree.dir("project/.agents/hooks/leak");
  await Deno.writeTextFile(
    `${dir}/HOOK.md`,
    "---\nname: leak\ndescription: d\ntrigger: pre-tool-call\n---\n",
  );
  await Deno.symlink(`${tree.root}/project`, `${dir}/scripts`);
  const found = await scanPath(denoFs, `${tree.root}/project/.agents/hooks`, "project");
  assert.deepEqual(found.hooks, []);
  assert.equal(found.problems[0]?.code, "HOOK_PATH_OUTSIDE");
  assert.equal(found.problems[0]?.path, `${dir}/scripts/run.js`);
});

Deno.test("`compileHook()` refuses an entry that resolves outside its hook folder", async () => {
  await using tree = await tempTree();
  await Deno.writeTextFile(`${tree.root}/outside.js`, "process.exit(0);");
  const dir = await tree.dir("hooks/h/scripts");
  await Deno.symlink(`${tree.root}/outside.js`, `${dir}/run.js`);
  const hook = {
    name: "h",
    level: "project" as const,
    dir: `${tree.root}/hooks/h`,
    body: "",
    entry: { runtime: "wasm" as const, format: "js" as const, path: `${dir}/run.js` },
    manifest: {} as never,
  };
  await assert.rejects(
    () => compileHook(hook, { cacheDir: `${tree.root}/cache` }),
    (err) => isHookboxError(err, "HOOK_PATH_OUTSIDE"),
  );
});

Deno.test("`scanPath()` follows a symlinked platform hook and reports a symlinked project one", async () => {
  await using tree = await tempTree();
  const real = await tree.hook("store", "guard", stub);
  await tree.dir("platform");
  await tree.dir("project");
  await Deno.symlink(real, `${tree.root}/platform/guard`);
  await Deno.symlink(real, `${tree.root}/project/guard`);
  await Deno.writeTextFile(`${tree.root}/platform/README.md`, "documented as ignored");
  const platform = await scanPath(denoFs, `${tree.root}/platform`, "platform");
  assert.deepEqual(platform.hooks.map((h) => h.name), ["guard"]);
  assert.deepEqual(platform.problems, []);
  const project = await scanPath(denoFs, `${tree.root}/project`, "project");
  assert.deepEqual(project.hooks, []);
  assert.equal(project.problems[0]?.code, "HOOK_PATH_OUTSIDE");
});

Deno.test("`scanPath()` reads at most MAX_HOOKS_PER_FOLDER hook folders and reports the rest", async () => {
  await using tree = await tempTree();
  await tree.dir("project");
  const names = Array.from({ length: MAX_HOOKS_PER_FOLDER + 2 }, (_, i) => `h${i}`);
  await Promise.all(names.map((n) => Deno.mkdir(`${tree.root}/project/${n}`)));
  const found = await scanPath(denoFs, `${tree.root}/project`, "project");
  const tooMany = found.problems.filter((p) => p.code === "HOOK_TOO_MANY");
  assert.equal(tooMany.length, 1);
  assert.equal(found.problems.length, MAX_HOOKS_PER_FOLDER + 1, "one problem per folder read");
});

Deno.test("`parseHookMd()` refuses deep nesting before the YAML parser recurses, and frames errors briefly", () => {
  // Source of the attack: 16,000 brackets, under the size cap. The YAML parser recursed
  // through them for 30-70 ms before running out of stack, for every such HOOK.md.
  const fm = (x: string) => `---\nname: a\ndescription: d\ntrigger: pre-tool-call\nx: ${x}\n---\n`;
  for (const open of ["[", "{a: "]) {
    assert.throws(
      () => parseHookMd(fm(open.repeat(16_000 / open.length))),
      (err) =>
        isHookboxError(err, "HOOK_MANIFEST_INVALID") &&
        err.message.includes(`nests [ and { more than ${MAX_FLOW_DEPTH} deep`) &&
        !err.message.includes("stack"),
    );
  }
  // As deep as the cap, it is read (and refused by the schema for its unknown key).
  const deep = "[".repeat(MAX_FLOW_DEPTH) + "]".repeat(MAX_FLOW_DEPTH);
  assert.throws(() => parseHookMd(fm(deep)), /unknown key\(s\) "x"/);
  // An error far along a long line: its frame shows 200 characters around it, not the line.
  const far = `"${"a".repeat(12_000)}" b`;
  assert.throws(
    () => parseHookMd(fm(far)),
    (err) =>
      isHookboxError(err, "HOOK_MANIFEST_INVALID") && /column 12007/.test(err.message) &&
      err.message.split("\n").every((line) => line.length < 220),
  );
});

Deno.test("`scanPath()` reads at most MAX_FOLDER_MANIFEST_CHARS of HOOK.md from a folder and reports the rest", async () => {
  await using tree = await tempTree();
  // Source of the attack: a repository's 1,000 hook folders of 16 KiB manifests, whose YAML
  // held every hook call's first discovery for 10-60 s.
  const description = "d".repeat(15 * 1024);
  const names = Array.from({ length: 100 }, (_, i) => `h${String(i).padStart(3, "0")}`);
  for (const name of names) {
    const dir = await tree.dir(`project/${name}`);
    await Deno.writeTextFile(
      `${dir}/HOOK.md`,
      `---\nname: ${name}\ndescription: "${description}"\ntrigger: pre-tool-call\n---\n`,
    );
    await Deno.writeTextFile(`${dir}/plugin.wasm`, "");
  }
  const found = await scanPath(denoFs, `${tree.root}/project`, "project");
  // Read in batches of 16, the budget looked at between them: 5 batches pass 1 MiB.
  const read = Math.ceil(MAX_FOLDER_MANIFEST_CHARS / (15 * 1024 + 60) / 16) * 16;
  assert.deepEqual(found.hooks.map((h) => h.name), names.slice(0, read));
  assert.equal(found.problems.length, 1);
  const [skipped] = found.problems;
  assert.equal(skipped!.code, "HOOK_TOO_MANY");
  assert.equal(skipped!.path, `${tree.root}/project/${names[read]}`);
  assert.match(skipped!.message, new RegExp(`with the ${99 - read} hook folders after it`));
});

Deno.test("`scanPath()` compiles at most MAX_FOLDER_MATCHER_INSTRUCTIONS of patterns from a folder", async () => {
  await using tree = await tempTree();
  // Source of the attack: a repository's hooks whose two patterns RE2 writes out to ~4,000
  // instructions each (~5 ms of compiling each): a thousand of them held a call's discovery
  // 10-15 s, outside any deadline, before any guard ran.
  const names = Array.from({ length: 200 }, (_, i) => `h${String(i).padStart(3, "0")}`);
  for (const [i, name] of names.entries()) {
    const dir = await tree.dir(`project/${name}`);
    await Deno.writeTextFile(
      `${dir}/HOOK.md`,
      `---
name: ${name}
description: d
trigger: pre-tool-call
matcher:
` +
        `  tool: "[a-z]{0,999}[a-z]{0,999}x${i}"
  pattern: "[^a]{0,999}[^b]{0,999}y${i}"
---
`,
    );
    await Deno.writeTextFile(`${dir}/plugin.wasm`, "");
  }
  // A hook with plain-word matchers costs the budget nothing.
  await tree.hook("project", "a-plain", {
    ...stub,
    frontmatter: { matcher: { tool: "^(Bash)$" } },
  });
  const found = await scanPath(denoFs, `${tree.root}/project`, "project");
  const perHook = 2 * 4_003;
  // Read in batches of 16 (the plain one first), the budget looked at between them.
  const batches = Math.ceil((MAX_FOLDER_MATCHER_INSTRUCTIONS / perHook + 1) / 16);
  const read = batches * 16 - 1;
  assert.deepEqual(found.hooks.map((h) => h.name), ["a-plain", ...names.slice(0, read)]);
  assert.equal(found.problems.length, 1);
  const [skipped] = found.problems;
  assert.equal(skipped!.code, "HOOK_TOO_MANY");
  assert.equal(skipped!.path, `${tree.root}/project/${names[read]}`);
  assert.match(skipped!.message, new RegExp(`with the ${199 - read} hook folders after it`));
  assert.match(skipped!.message, /matcher patterns .* instructions once compiled .*use \+ or \*/);
});

Deno.test("`createExecutor()` matches a catastrophic matcher regex in linear time", async () => {
  await using tree = await tempTree();
  // The attack: `(a+)+$` against 30+ characters backtracks for minutes in a JS RegExp.
  await tree.hook("project", "redos", {
    ...stub,
    frontmatter: { matcher: { tool: "^(a+)+$", pattern: "(x+x+)+y" } },
  });
  const { createExecutor } = await import("../../../packages/hookbox/deno.ts");
  const { fakeRuntime, toolEvent } = await import("../../_helpers.ts");
  const runtime = fakeRuntime();
  const executor = createExecutor({
    userDir: null,
    projectDir: `${tree.root}/project`,
    runtimes: { wasm: runtime },
  });
  const event = toolEvent({
    tool_name: `${"a".repeat(5000)}!`,
    tool_input: { c: "x".repeat(5000) },
  });
  const result = await executor.dispatch(event);
  assert.deepEqual(result.hooks, [], "neither regex matches, and dispatch returned");
  await executor.close();
});

Deno.test("`scanPath()` refuses a matcher RE2 cannot compile, naming the field", async () => {
  await using tree = await tempTree();
  await tree.hook("project", "lookbehind", {
    ...stub,
    frontmatter: { matcher: { tool: "(?<=a)b" } },
  });
  const found = await scanPath(denoFs, `${tree.root}/project`, "project");
  assert.equal(found.problems[0]?.code, "HOOK_MANIFEST_INVALID");
  assert.equal(found.problems[0]?.field, "matcher.tool");
});
