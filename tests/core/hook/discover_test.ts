import assert from "node:assert/strict";
import { denoFs } from "../../../packages/host-deno/fs.ts";
import { nodeFs } from "../../../packages/host-node/fs.ts";
import { MAX_FOLDER_ENTRIES } from "../../../packages/core/hook/files.ts";
import { scanPath } from "../../../packages/core/hook/discover.ts";
import { createExecutor } from "../../../packages/hookbox/deno.ts";
import { fakeRuntime, type TempTree, tempTree, toolEvent, WASM_STUB } from "../../_helpers.ts";

/** An executor over `<root>/platform`, `<root>/user`, `<root>/project` with a fake wasm runtime. */
function executorFor(tree: TempTree, policy = {}) {
  const runtime = fakeRuntime();
  // A platform folder named must be there (a missing one is a problem); it may be empty.
  Deno.mkdirSync(`${tree.root}/platform`, { recursive: true });
  const executor = createExecutor({
    platformDirs: [`${tree.root}/platform`],
    userDir: `${tree.root}/user`,
    projectDir: `${tree.root}/project`,
    runtimes: { wasm: runtime },
    policy,
  });
  return { executor, runtime };
}

const stub = { files: WASM_STUB };

Deno.test("`createExecutor()` discovers platform, user and project hooks with their level", async () => {
  await using tree = await tempTree();
  await tree.hook("platform", "p-hook", stub);
  await tree.hook("user", "u-hook", stub);
  await tree.hook("project", "j-hook", stub);
  const { executor } = executorFor(tree);
  const levels = Object.fromEntries((await executor.hooks()).map((h) => [h.name, h.level]));
  assert.deepEqual(levels, { "p-hook": "platform", "u-hook": "user", "j-hook": "project" });
  assert.deepEqual(await executor.problems(), []);
  await executor.close();
});

Deno.test("`createExecutor()` reads the project folder of the event's work_dir by default", async () => {
  await using tree = await tempTree();
  await tree.hook("a/.agents/hooks", "in-a", stub);
  await tree.hook("b/.agents/hooks", "in-b", stub);
  const runtime = fakeRuntime();
  const executor = createExecutor({ userDir: null, runtimes: { wasm: runtime } });
  const a = await executor.dispatch(toolEvent({ work_dir: `${tree.root}/a` }));
  const b = await executor.dispatch(toolEvent({ work_dir: `${tree.root}/b` }));
  assert.deepEqual(a.hooks.map((h) => h.name), ["in-a"]);
  assert.deepEqual(b.hooks.map((h) => h.name), ["in-b"]);
  await executor.close();
});

Deno.test("`createExecutor()` lets a project hook replace the user hook of the same name", async () => {
  await using tree = await tempTree();
  const userDir = await tree.hook("user", "guard", stub);
  const projectDir = await tree.hook("project", "guard", stub);
  const { executor, runtime } = executorFor(tree);
  const hooks = await executor.hooks();
  assert.equal(hooks.length, 1);
  assert.equal(hooks[0]?.dir, projectDir);
  const result = await executor.dispatch(toolEvent());
  assert.deepEqual(result.hooks.map((h) => [h.name, h.level]), [["guard", "project"]]);
  assert.equal(runtime.calls.length, 1);
  assert.notEqual(hooks[0]?.dir, userDir);
  // The replaced hook is named, not dropped without a word.
  assert.equal(hooks[0]?.replaces, userDir);
  assert.deepEqual(await executor.problems(), []);
  await executor.close();
});

Deno.test("a repository's hook replacing the user's closed guard is reported where the user sees it", async () => {
  await using tree = await tempTree();
  const closed = { files: WASM_STUB, frontmatter: { on_error: "closed" } };
  const userDir = await tree.hook("user", "no-rm", closed);
  const projectDir = await tree.hook("project", "no-rm", stub);
  await tree.hook("user", "formatter", stub);
  await tree.hook("project", "formatter", stub);
  const { executor } = executorFor(tree);
  const hooks = await executor.hooks();
  // SPEC §2 still holds: the project's hooks run in place of the user's.
  assert.deepEqual(hooks.map((h) => [h.name, h.level, h.replaces]).sort(), [
    ["formatter", "project", `${tree.root}/user/formatter`],
    ["no-rm", "project", userDir],
  ]);
  // Only the closed guard's replacement is a problem (a warning on every allow; a block under
  // --strict), naming both folders and how to keep such a guard.
  const problems = await executor.problems();
  assert.equal(problems.length, 1);
  assert.equal(problems[0]?.code, "HOOK_NAME_CONFLICT");
  assert.equal(problems[0]?.path, userDir);
  assert.equal(problems[0]?.level, "user");
  assert.match(problems[0]!.message, /on_error: closed guard/);
  assert.ok(problems[0]!.message.includes(projectDir));
  assert.match(problems[0]!.message, /--hooks-dir/);
  await executor.close();
});

Deno.test("`createExecutor()` never lets a user or project hook replace a platform hook", async () => {
  await using tree = await tempTree();
  const platformDir = await tree.hook("platform", "guard", stub);
  const userDir = await tree.hook("user", "guard", stub);
  const projectDir = await tree.hook("project", "guard", stub);
  const { executor } = executorFor(tree);
  const hooks = await executor.hooks();
  assert.deepEqual(hooks.map((h) => [h.name, h.level, h.dir]), [[
    "guard",
    "platform",
    platformDir,
  ]]);
  const conflicts = (await executor.problems()).filter((p) => p.code === "HOOK_NAME_CONFLICT");
  assert.deepEqual(conflicts.map((p) => p.path).sort(), [projectDir, userDir].sort());
  const result = await executor.dispatch(toolEvent());
  assert.deepEqual(result.hooks.map((h) => h.level), ["platform"]);
  await executor.close();
});

Deno.test("`policy.disabledHooks` switches off user and project hooks but never platform ones", async () => {
  await using tree = await tempTree();
  await tree.hook("platform", "p-hook", stub);
  await tree.hook("user", "u-hook", stub);
  await tree.hook("project", "j-hook", stub);
  await tree.hook("project", "kept", stub);
  const disabledHooks = ["p-hook", "u-hook", "j-hook"];
  const { executor } = executorFor(tree, { disabledHooks });
  const result = await executor.dispatch(toolEvent());
  assert.deepEqual(result.hooks.map((h) => h.name).sort(), ["kept", "p-hook"]);
  await executor.close();

  const { executor: perCall } = executorFor(tree);
  const call = await perCall.dispatch(toolEvent(), { policy: { disabledHooks } });
  assert.deepEqual(call.hooks.map((h) => h.name).sort(), ["kept", "p-hook"]);
  await perCall.close();
});

Deno.test("`createExecutor()` reports invalid hook folders with code, path and field and loads the rest", async () => {
  await using tree = await tempTree();
  await tree.hook("project", "good-a", stub);
  const badPriority = await tree.hook("project", "bad-priority", {
    frontmatter: { priority: 1001 },
    ...stub,
  });
  const mismatch = await tree.hook("project", "mismatch", {
    frontmatter: { name: "other" },
    ...stub,
  });
  const noEntry = await tree.hook("project", "no-entry", {});
  const noMd = await tree.hook("project", "no-md", { noHookMd: true, ...stub });
  const badYaml = await tree.hook("project", "bad-yaml", { raw: "---\nname: [\n---\n", ...stub });
  await tree.hook("project", "good-b", stub);
  const { executor } = executorFor(tree);
  assert.deepEqual((await executor.hooks()).map((h) => h.name).sort(), ["good-a", "good-b"]);
  const problems = (await executor.problems()).map((p) => [p.code, p.path, p.field ?? null]);
  assert.deepEqual(
    problems.sort(),
    [
      ["HOOK_MANIFEST_INVALID", `${badPriority}/HOOK.md`, "priority"],
      ["HOOK_NAME_MISMATCH", `${mismatch}/HOOK.md`, "name"],
      ["HOOK_ENTRY_MISSING", noEntry, null],
      ["HOOK_MANIFEST_MISSING", noMd, null],
      ["HOOK_MANIFEST_INVALID", `${badYaml}/HOOK.md`, null],
    ].sort(),
  );
  const result = await executor.dispatch(toolEvent());
  assert.deepEqual(result.hooks.map((h) => h.name), ["good-a", "good-b"]);
  await executor.close();
});

Deno.test("`scanPath()` accepts a hook folder itself or a folder of hook folders", async () => {
  await using tree = await tempTree();
  const one = await tree.hook("many", "one", stub);
  await tree.hook("many", "two", stub);
  await tree.dir("many/.hidden");
  const single = await scanPath(denoFs, one, "project");
  assert.deepEqual(single.hooks.map((h) => h.name), ["one"]);
  const many = await scanPath(denoFs, `${tree.root}/many`, "project");
  assert.deepEqual(many.hooks.map((h) => h.name), ["one", "two"]);
  assert.deepEqual(many.problems, []);
  const missing = await scanPath(denoFs, `${tree.root}/nope`, "user");
  assert.deepEqual(missing, { hooks: [], problems: [] });
});

Deno.test("`scanPath()` reports a hook folder removed while it is read and loads the rest", async () => {
  await using tree = await tempTree();
  await tree.hook("platform", "gone", stub);
  await tree.hook("platform", "kept", stub);
  // The folder is there when listed and stat-ed, and gone when its real path is asked for.
  const vanishing = {
    ...denoFs,
    realPath: (path: string) =>
      path.includes("/gone") ? Deno.realPath(`${tree.root}/no-such-folder`) : denoFs.realPath(path),
  };
  const found = await scanPath(vanishing, `${tree.root}/platform`, "platform");
  assert.deepEqual(found.hooks.map((h) => h.name), ["kept"]);
  assert.equal(found.problems.length, 1);
  assert.equal(found.problems[0]!.code, "HOOK_DIR_UNREADABLE");
  assert.equal(found.problems[0]!.path, `${tree.root}/platform/gone`);
  assert.match(found.problems[0]!.message, /could not be read/);
});

Deno.test("`scanPath()` does not list a folder of hooks past its entry cap, on Deno and Node alike", async () => {
  // A repository's folder of a million plain files cost every hook call seconds of listing
  // and sorting them (200,000 took a call from 50 ms to 1 s). Past the cap, none is read.
  await using tree = await tempTree();
  await tree.hook("project", "kept", stub);
  const folder = `${tree.root}/project`;
  for (let i = 0; i < MAX_FOLDER_ENTRIES - 1; i++) {
    Deno.writeFileSync(`${folder}/f${i}`, new Uint8Array());
  }
  for (const fs of [denoFs, nodeFs]) {
    const under = await scanPath(fs, folder, "project");
    assert.deepEqual([under.hooks.map((h) => h.name), under.problems], [["kept"], []]);
  }
  Deno.writeFileSync(`${folder}/one-more`, new Uint8Array());
  for (const fs of [denoFs, nodeFs]) {
    const over = await scanPath(fs, folder, "project");
    assert.deepEqual(over.hooks, []);
    assert.equal(over.problems.length, 1);
    assert.equal(over.problems[0]!.code, "HOOK_TOO_MANY");
    assert.match(over.problems[0]!.message, /more than 10000 files and folders; none of its hooks/);
    // Listing stopped one entry past the cap.
    assert.equal((await fs.readDir(folder, 5)).length, 6);
  }
});
