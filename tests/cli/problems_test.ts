import assert from "node:assert/strict";
import { runCli } from "../_cli.ts";
import { sh, tempTree, toolEvent } from "../_helpers.ts";

Deno.test("`hookbox dispatch` warns on stderr about skipped hook folders when it allows", async () => {
  await using tree = await tempTree();
  const work = await tree.dir("work");
  await tree.hook("work/.agents/hooks", "broken", { raw: "---\nname: broken\n---\n" });
  const run = await runCli(["dispatch"], {
    cwd: work,
    env: { XDG_CONFIG_HOME: `${tree.root}/xdg` },
    stdin: JSON.stringify(toolEvent()),
  });
  assert.equal(run.code, 0);
  assert.equal(JSON.parse(run.stdout).decision, "allow");
  assert.match(
    run.stderr,
    /^hookbox: warning: HOOK_MANIFEST_INVALID \S+\/broken\/HOOK\.md field description: /m,
  );
});

Deno.test("`hookbox dispatch` keeps stderr to the reason alone when it blocks", async () => {
  await using tree = await tempTree();
  const work = await tree.dir("work");
  await tree.hook("work/.agents/hooks", "broken", { raw: "---\nname: broken\n---\n" });
  await tree.hook("work/.agents/hooks", "blocker", {
    frontmatter: { description: "d", trigger: "pre-tool-call" },
    files: { "scripts/run.sh": sh("echo 'no way' >&2; exit 2") },
  });
  const run = await runCli(["dispatch", "--allow-subprocess"], {
    cwd: work,
    env: { XDG_CONFIG_HOME: `${tree.root}/xdg` },
    stdin: JSON.stringify(toolEvent()),
  });
  assert.equal(run.code, 2);
  assert.equal(run.stderr.trim(), "no way");
});

Deno.test("`hookbox validate` names a hook folder without HOOK.md itself", async () => {
  await using tree = await tempTree();
  const hook = await tree.hook("", "no-manifest", {
    noHookMd: true,
    files: { "scripts/run.sh": sh("exit 0") },
  });
  const run = await runCli(["validate", hook], { cwd: tree.root });
  assert.equal(run.code, 1);
  assert.match(run.stdout, new RegExp(`^HOOK_MANIFEST_MISSING ${hook}: `, "m"));
  assert.doesNotMatch(run.stdout, /scripts/);
});
