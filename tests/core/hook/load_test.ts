import assert from "node:assert/strict";
import { denoFs } from "../../../packages/host-deno/fs.ts";
import { isHookboxError } from "../../../packages/core/errors.ts";
import { loadHook } from "../../../packages/core/hook/discover.ts";
import { sh, tempTree } from "../../_helpers.ts";

async function loadFails(dir: string, code: string): Promise<{ path?: string; field?: string }> {
  const err = await loadHook(denoFs, dir, "project").then(
    () => assert.fail(`${dir} loaded`),
    (err: unknown) => err,
  );
  assert.ok(isHookboxError(err), String(err));
  assert.equal(err.code, code, err.message);
  return { ...(err.path ? { path: err.path } : {}), ...(err.field ? { field: err.field } : {}) };
}

Deno.test("`loadHook()` reports a folder without HOOK.md as HOOK_MANIFEST_MISSING", async () => {
  await using tree = await tempTree();
  const dir = await tree.hook("", "a", { noHookMd: true, files: { "scripts/run.sh": "exit 0" } });
  assert.equal((await loadFails(dir, "HOOK_MANIFEST_MISSING")).path, dir);
});

Deno.test("`loadHook()` rejects a name that differs from the folder with HOOK_NAME_MISMATCH", async () => {
  await using tree = await tempTree();
  const dir = await tree.hook("", "folder-name", {
    frontmatter: { name: "other-name" },
    files: { "scripts/run.sh": "exit 0" },
  });
  const where = await loadFails(dir, "HOOK_NAME_MISMATCH");
  assert.equal(where.field, "name");
  assert.equal(where.path, `${dir}/HOOK.md`);
});

Deno.test("`loadHook()` rejects a folder with no entry as HOOK_ENTRY_MISSING", async () => {
  await using tree = await tempTree();
  const dir = await tree.hook("", "a", { files: { "scripts/readme.txt": "nothing to run" } });
  assert.equal((await loadFails(dir, "HOOK_ENTRY_MISSING")).path, dir);
});

Deno.test("`loadHook()` rejects a scripts/run that is not executable", async () => {
  await using tree = await tempTree();
  const dir = await tree.hook("", "a", { files: { "scripts/run": "#!/bin/sh\nexit 0\n" } });
  const where = await loadFails(dir, "HOOK_ENTRY_MISSING");
  assert.equal(where.path, `${dir}/scripts/run`);
});

Deno.test("`loadHook()` resolves entries in SPEC §2 order", async () => {
  await using tree = await tempTree();
  const cases: Array<[Record<string, string | { content: string; mode: number }>, string, string]> =
    [
      [{ "plugin.wasm": "", "scripts/run.wasm": "", "scripts/run.sh": "" }, "wasm", "plugin.wasm"],
      [{ "scripts/run.wasm": "", "scripts/run.js": "" }, "wasm", "scripts/run.wasm"],
      [
        { "scripts/run.js": "", "scripts/run.mjs": "", "scripts/run.ts": "" },
        "wasm",
        "scripts/run.js",
      ],
      [{ "scripts/run.ts": "", "scripts/run.sh": "" }, "wasm", "scripts/run.ts"],
      [{ "scripts/run.as.ts": "", "scripts/run": sh("exit 0") }, "wasm", "scripts/run.as.ts"],
      [{ "scripts/run": sh("exit 0"), "scripts/run.sh": "" }, "subprocess", "scripts/run"],
      [{ "scripts/run.sh": "", "scripts/run.py": "" }, "subprocess", "scripts/run.sh"],
      [{ "scripts/run.py": "" }, "subprocess", "scripts/run.py"],
    ];
  for (const [i, [files, runtime, winner]] of cases.entries()) {
    const dir = await tree.hook("", `case-${i}`, { files });
    const hook = await loadHook(denoFs, dir, "project");
    assert.equal(hook.entry.runtime, runtime, winner);
    assert.ok("path" in hook.entry && hook.entry.path === `${dir}/${winner}`, winner);
  }
});

Deno.test("`loadHook()` runs run.sh with bash and run.py with python3", async () => {
  await using tree = await tempTree();
  const shDir = await tree.hook("", "s", { files: { "scripts/run.sh": "" } });
  const pyDir = await tree.hook("", "p", { files: { "scripts/run.py": "" } });
  const shHook = await loadHook(denoFs, shDir, "user");
  const pyHook = await loadHook(denoFs, pyDir, "user");
  assert.ok(shHook.entry.runtime === "subprocess" && shHook.entry.command[0] === "bash");
  assert.ok(pyHook.entry.runtime === "subprocess" && pyHook.entry.command[0] === "python3");
  assert.equal(shHook.level, "user");
});

Deno.test("`loadHook()` makes a prompt hook when `inject` is set and there is no entry", async () => {
  await using tree = await tempTree();
  const dir = await tree.hook("", "style", {
    frontmatter: { trigger: "pre-agent-turn", inject: { role: "system" } },
    body: "Answer in French.",
  });
  const hook = await loadHook(denoFs, dir, "project");
  assert.equal(hook.entry.runtime, "prompt");
  assert.equal(hook.body, "Answer in French.");
  const withEntry = await tree.hook("", "style-run", {
    frontmatter: { inject: { role: "system" } },
    files: { "scripts/run.sh": "" },
  });
  assert.equal((await loadHook(denoFs, withEntry, "project")).entry.runtime, "subprocess");
});

Deno.test("`loadHook()` reports an invalid frontmatter field with code, path and field", async () => {
  await using tree = await tempTree();
  const dir = await tree.hook("", "a", {
    frontmatter: { matcher: { tool: "(" } },
    files: { "scripts/run.sh": "" },
  });
  const where = await loadFails(dir, "HOOK_MANIFEST_INVALID");
  assert.equal(where.path, `${dir}/HOOK.md`);
  assert.equal(where.field, "matcher.tool");
});
