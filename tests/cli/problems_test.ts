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

Deno.test("a folder named on the command line that is not there is named, never 'no hooks'", async () => {
  const tree = await tempTree();
  const list = await runCli(["list", "--hooks-dir", `${tree.root}/nope`], { cwd: tree.root });
  assert.equal(list.code, 1);
  assert.match(list.stderr, /hookbox list: .*\/nope: no such folder/);
  const compile = await runCli(["compile", "nope"], { cwd: tree.root });
  assert.equal(compile.code, 1);
  assert.match(compile.stderr, /HOOK_DIR_UNREADABLE .*\/nope: no such folder/);
});

Deno.test("`hookbox bundle --db` refuses a store that is not there instead of bundling an empty one", async () => {
  const tree = await tempTree();
  const db = `${tree.root}/missing/hookbox.db`;
  const run = await runCli(["bundle", "--db", `sqlite:${db}`, "--out", `${tree.root}/edge`], {
    cwd: tree.root,
  });
  assert.equal(run.code, 1);
  assert.match(run.stderr, /OPTION_INVALID: no store at .*missing\/hookbox\.db/);
  assert.equal(await Deno.stat(db).then(() => true, () => false), false, "no store was made");
  assert.equal(await Deno.stat(`${tree.root}/edge`).then(() => true, () => false), false);
});

Deno.test("a misspelt trigger is named with the event it probably meant and every event there is", async () => {
  const tree = await tempTree();
  const dir = await tree.dir("hooks/typo");
  await Deno.writeTextFile(
    `${dir}/HOOK.md`,
    "---\nname: typo\ndescription: d\ntrigger: pre_tol_call\n---\n",
  );
  await Deno.writeTextFile(`${dir}/plugin.wasm`, "x");
  const run = await runCli(["validate", dir], { cwd: tree.root });
  assert.equal(run.code, 1);
  assert.match(
    run.stdout,
    /field trigger: .*unknown event type "pre_tol_call"; did you mean "pre-tool-call"\? \(expected one of pre-session, .*post-llm-call-failure\)/,
  );
});
