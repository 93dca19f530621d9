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

Deno.test("a repository's hook that replaces the user's closed guard is said on every allow and listed", async () => {
  await using tree = await tempTree();
  const work = await tree.dir("work");
  const guard = (onError: string, exit: number) => ({
    frontmatter: { description: "d", trigger: "pre-tool-call", on_error: onError },
    files: { "scripts/run.sh": sh(`exit ${exit}`) },
  });
  const user = await tree.hook("xdg/agents/hooks", "no-rm", guard("closed", 2));
  // The repository's hook of the same name lets everything through.
  const project = await tree.hook("work/.agents/hooks", "no-rm", guard("open", 0));
  const env = { XDG_CONFIG_HOME: `${tree.root}/xdg` };
  const stdin = JSON.stringify(toolEvent());
  const run = await runCli(["dispatch", "--allow-subprocess"], { cwd: work, env, stdin });
  // SPEC §2: the project's hook replaces the user's; the user is told, with the way out.
  assert.equal(run.code, 0);
  assert.equal(JSON.parse(run.stdout).decision, "allow");
  assert.match(
    run.stderr,
    new RegExp(
      `^hookbox: warning: HOOK_NAME_CONFLICT ${user}: the project hook "no-rm" ` +
        `\\(${project}\\) replaces this user hook, an on_error: closed guard.*--hooks-dir`,
      "m",
    ),
  );
  // Under --strict the replaced guard is a skipped folder: a block.
  const strict = await runCli(["dispatch", "--allow-subprocess", "--strict"], {
    cwd: work,
    env,
    stdin,
  });
  assert.equal(strict.code, 2);
  assert.match(strict.stderr, /HOOK_NAME_CONFLICT/);
  // A payload hookbox cannot read is blocked by the replaced guard, as by a broken one.
  const unreadable = await runCli(
    ["dispatch", "--allow-subprocess", "--agent", "claude-code", "--event", "PreToolUse"],
    { cwd: work, env, stdin: '{"tool_name": "Bash", "tool_input": ' },
  );
  const denied = JSON.parse(unreadable.stdout).hookSpecificOutput;
  assert.equal(denied.permissionDecision, "deny");
  assert.match(denied.permissionDecisionReason, /hook "no-rm" guards it and fails closed/);
  const list = await runCli(["list"], { cwd: work, env });
  assert.equal(list.code, 0);
  assert.ok(
    list.stdout.includes(`no-rm [subprocess] (replaces the user hook in ${user})`),
    list.stdout,
  );
  assert.match(list.stderr, /warning: HOOK_NAME_CONFLICT/);
});

Deno.test("a closed guard whose HOOK.md does not load blocks until it is fixed, saying why", async () => {
  await using tree = await tempTree();
  const work = await tree.dir("work");
  // The user's guard, with a typo in its trigger list: it cannot run, and it said `closed`.
  await tree.hook("xdg/agents/hooks", "no-rm", {
    raw: "---\nname: no-rm\ndescription: d\non_error: closed\ntrigger: [pre-tool-call\n---\n",
  });
  const env = { XDG_CONFIG_HOME: `${tree.root}/xdg` };
  const stdin = JSON.stringify(toolEvent());
  const plain = await runCli(["dispatch"], { cwd: work, env, stdin });
  assert.equal(plain.code, 2);
  assert.equal(JSON.parse(plain.stdout).blocked_by, "no-rm");
  assert.match(
    plain.stderr,
    /^hook "no-rm" says on_error: closed but could not load, so it blocks until it is fixed \(HOOK_MANIFEST_INVALID .*hookbox validate shows why\)$/m,
  );
  const agent = await runCli(["dispatch", "--agent", "claude-code", "--event", "PreToolUse"], {
    cwd: work,
    env,
    stdin: JSON.stringify({
      session_id: "s1",
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "ls" },
      cwd: work,
    }),
  });
  const denied = JSON.parse(agent.stdout).hookSpecificOutput;
  assert.equal(denied.permissionDecision, "deny");
  assert.match(
    denied.permissionDecisionReason,
    /hook "no-rm" says on_error: closed but could not load/,
  );
  // A broken hook that is not a closed guard is a warning, as before.
  await Deno.writeTextFile(
    `${tree.root}/xdg/agents/hooks/no-rm/HOOK.md`,
    "---\nname: no-rm\ndescription: d\ntrigger: [pre-tool-call\n---\n",
  );
  const open = await runCli(["dispatch"], { cwd: work, env, stdin });
  assert.equal(open.code, 0);
  assert.match(open.stderr, /^hookbox: warning: HOOK_MANIFEST_INVALID .*no-rm/m);
});

Deno.test("a repository's HOOK.md that is a link to /dev/zero or a FIFO is a skipped folder, not a hang", async () => {
  await using tree = await tempTree();
  const work = await tree.dir("work");
  // Git stores links: a repository can ship one to an endless device. The user's folder has a FIFO
  // with no writer. Each is a problem; whether it was a closed guard is read from regular files only.
  await Deno.mkdir(`${work}/.agents/hooks/zero`, { recursive: true });
  await Deno.symlink("/dev/zero", `${work}/.agents/hooks/zero/HOOK.md`);
  await Deno.mkdir(`${tree.root}/xdg/agents/hooks/fifo`, { recursive: true });
  const made = await new Deno.Command("mkfifo", {
    args: [`${tree.root}/xdg/agents/hooks/fifo/HOOK.md`],
  }).output();
  assert.ok(made.success, new TextDecoder().decode(made.stderr));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<null>((resolve) => timer = setTimeout(() => resolve(null), 60_000));
  try {
    const run = await Promise.race([
      runCli(["dispatch"], {
        cwd: work,
        env: { XDG_CONFIG_HOME: `${tree.root}/xdg` },
        stdin: JSON.stringify(toolEvent()),
      }),
      hung,
    ]);
    assert.ok(run !== null, "hookbox dispatch did not answer within 60 s");
    assert.equal(run.code, 0, run.stderr);
    assert.equal(JSON.parse(run.stdout).decision, "allow");
    assert.match(run.stderr, /warning: \S+ \S+\/zero/);
    assert.match(run.stderr, /warning: \S+ \S+\/fifo/);
  } finally {
    clearTimeout(timer);
  }
});
