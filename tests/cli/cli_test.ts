import assert from "node:assert/strict";
import { type CliRun, runCli } from "../_cli.ts";
import { RESULT_KEYS, sh, type TempTree, tempTree, toolEvent } from "../_helpers.ts";

/** Runs `hookbox ...args` with a temporary XDG_CONFIG_HOME, in the tree's root by default. */
function cli(
  tree: TempTree,
  args: string[],
  options: { stdin?: string; cwd?: string } = {},
): Promise<CliRun> {
  return runCli(args, {
    cwd: options.cwd ?? tree.root,
    env: { XDG_CONFIG_HOME: `${tree.root}/xdg` },
    ...(options.stdin === undefined ? {} : { stdin: options.stdin }),
  });
}

/** A prompt hook (runs without subprocess permission) triggered by `trigger`. */
function promptHook(tree: TempTree, parent: string, name: string, frontmatter = {}) {
  return tree.hook(parent, name, {
    frontmatter: { trigger: "pre-session", inject: { role: "system" }, ...frontmatter },
    body: `from ${name}`,
  });
}

const SESSION = JSON.stringify({ event_type: "pre-session", session_id: "s" });

function hookNames(run: CliRun): string[] {
  return (JSON.parse(run.stdout).hooks as Array<{ name: string }>).map((h) => h.name);
}

/** Asserts exit 1, nothing on stdout and one line on stderr matching `pattern`. */
function assertBadInput(run: CliRun, pattern: RegExp): void {
  assert.equal(run.code, 1, run.stderr);
  assert.equal(run.stdout, "");
  const lines = run.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, `expected one line, got: ${run.stderr}`);
  assert.match(lines[0]!, pattern);
}

Deno.test("`hookbox dispatch` exits 0 with the §4 result JSON on stdout for an allow", async () => {
  await using tree = await tempTree();
  await promptHook(tree, ".agents/hooks", "hello");
  const run = await cli(tree, ["dispatch"], { stdin: SESSION });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.deepEqual(Object.keys(result).sort(), RESULT_KEYS);
  assert.equal(result.decision, "allow");
  assert.equal(result.event_type, "pre-session");
  assert.deepEqual(hookNames(run), ["hello"]);
  assert.equal(result.inject[0].content, "from hello");
});

Deno.test("`hookbox dispatch` exits 2 with the reason on stderr for a block", async () => {
  await using tree = await tempTree();
  await tree.hook(".agents/hooks", "block-rm", {
    frontmatter: { matcher: { pattern: "rm -rf" } },
    files: { "scripts/run.sh": 'echo "rm -rf is not allowed" >&2\nexit 2' },
  });
  const event = JSON.stringify(toolEvent({ tool_input: { command: "rm -rf /" } }));
  const run = await cli(tree, ["dispatch", "--allow-subprocess"], { stdin: event });
  assert.equal(run.code, 2);
  assert.equal(run.stderr.trim(), "rm -rf is not allowed");
  const result = JSON.parse(run.stdout);
  assert.equal(result.decision, "block");
  assert.equal(result.blocked_by, "block-rm");
  assert.equal(result.reason, "rm -rf is not allowed");
});

Deno.test("`hookbox dispatch` skips subprocess hooks without --allow-subprocess", async () => {
  await using tree = await tempTree();
  await tree.hook(".agents/hooks", "block-all", { files: { "scripts/run": sh("exit 2") } });
  const run = await cli(tree, ["dispatch"], { stdin: JSON.stringify(toolEvent()) });
  assert.equal(run.code, 0, run.stderr);
  const [record] = JSON.parse(run.stdout).hooks;
  assert.equal(record.outcome, "skipped");
  assert.equal(record.detail, "subprocess not permitted");
});

Deno.test("`hookbox dispatch --event` sets or overrides event_type", async () => {
  await using tree = await tempTree();
  await promptHook(tree, ".agents/hooks", "on-turn", { trigger: "pre-agent-turn" });
  const set = await cli(tree, ["dispatch", "--event", "pre-agent-turn"], {
    stdin: JSON.stringify({ session_id: "s", prompt: "hi" }),
  });
  assert.equal(set.code, 0, set.stderr);
  assert.equal(JSON.parse(set.stdout).event_type, "pre-agent-turn");
  assert.deepEqual(hookNames(set), ["on-turn"]);
  const override = await cli(tree, ["dispatch", "--event", "pre_agent_turn"], {
    stdin: JSON.stringify({ event_type: "pre-session", session_id: "s", prompt: "hi" }),
  });
  assert.equal(override.code, 0, override.stderr);
  assert.equal(JSON.parse(override.stdout).event_type, "pre-agent-turn");
  assert.deepEqual(hookNames(override), ["on-turn"]);
});

Deno.test("`hookbox dispatch` takes the work dir from --work-dir, else the event, else the cwd", async () => {
  await using tree = await tempTree();
  const flag = await tree.dir("flag");
  const fromEvent = await tree.dir("event");
  const cwd = await tree.dir("cwd");
  await promptHook(tree, "flag/.agents/hooks", "flag-hook");
  await promptHook(tree, "event/.agents/hooks", "event-hook");
  await promptHook(tree, "cwd/.agents/hooks", "cwd-hook");
  const withDir = JSON.stringify({
    event_type: "pre-session",
    session_id: "s",
    work_dir: fromEvent,
  });
  const [a, b, c] = await Promise.all([
    cli(tree, ["dispatch", "--work-dir", flag], { stdin: withDir, cwd }),
    cli(tree, ["dispatch"], { stdin: withDir, cwd }),
    cli(tree, ["dispatch"], { stdin: SESSION, cwd }),
  ]);
  assert.deepEqual(hookNames(a!), ["flag-hook"]);
  assert.deepEqual(hookNames(b!), ["event-hook"]);
  assert.deepEqual(hookNames(c!), ["cwd-hook"]);
});

Deno.test("`hookbox dispatch --hooks-dir` adds platform hook folders (repeatable)", async () => {
  await using tree = await tempTree();
  await promptHook(tree, "ops-1", "ops-a", { priority: 10 });
  await promptHook(tree, "ops-2", "ops-b", { priority: 20 });
  await promptHook(tree, "xdg/agents/hooks", "mine");
  await promptHook(tree, "xdg/agents/hooks", "ops-a");
  const run = await cli(
    tree,
    ["dispatch", "--hooks-dir", `${tree.root}/ops-1`, "--hooks-dir", `${tree.root}/ops-2`],
    { stdin: SESSION },
  );
  assert.equal(run.code, 0, run.stderr);
  const hooks = JSON.parse(run.stdout).hooks.map((h: { name: string; level: string }) => [
    h.name,
    h.level,
  ]);
  assert.deepEqual(hooks, [["mine", "user"], ["ops-b", "platform"], ["ops-a", "platform"]]);
});

Deno.test("`hookbox dispatch` exits 1 with one line naming the problem on bad input", async () => {
  await using tree = await tempTree();
  const missing = JSON.stringify({ event_type: "pre-tool-call", session_id: "s", tool_input: {} });
  const runs = await Promise.all([
    cli(tree, ["dispatch"], { stdin: missing }),
    cli(tree, ["dispatch"], { stdin: '{"event_type": "pre-session",' }),
    cli(tree, ["dispatch"], { stdin: "" }),
    cli(tree, ["dispatch", "--bogus"], { stdin: SESSION }),
    cli(tree, ["dispatch", "--event", "pre-nothing"], { stdin: SESSION }),
    cli(tree, ["dispatch"], { stdin: "[1, 2]" }),
    cli(tree, ["dispatch"], { stdin: JSON.stringify({ ...toolEvent(), timestamp: "now" }) }),
  ]);
  const [field, json, empty, flag, event, array, timestamp] = runs;
  assertBadInput(field!, /tool_name/);
  assertBadInput(json!, /JSON/);
  assertBadInput(empty!, /stdin|empty/i);
  assertBadInput(flag!, /--bogus/);
  assertBadInput(event!, /event_type|pre-nothing/);
  assertBadInput(array!, /object/);
  assertBadInput(timestamp!, /timestamp/);
});

Deno.test("`hookbox validate` prints each problem with code, path and field and exits 1", async () => {
  await using tree = await tempTree();
  await promptHook(tree, "hooks", "good");
  const badPriority = await tree.hook("hooks", "bad-priority", {
    frontmatter: { priority: 5000 },
    files: { "scripts/run.sh": "" },
  });
  const mismatch = await tree.hook("hooks", "mismatch", {
    frontmatter: { name: "other" },
    files: { "scripts/run.sh": "" },
  });
  const noEntry = await tree.hook("hooks", "no-entry", {});
  const run = await cli(tree, ["validate", `${tree.root}/hooks`]);
  assert.equal(run.code, 1, run.stdout + run.stderr);
  const text = run.stdout + run.stderr;
  const lineWith = (path: string) => text.split("\n").find((l) => l.includes(path)) ?? "";
  assert.match(lineWith(`${badPriority}/HOOK.md`), /HOOK_MANIFEST_INVALID.*priority/);
  assert.match(lineWith(`${mismatch}/HOOK.md`), /HOOK_NAME_MISMATCH.*name/);
  assert.match(lineWith(noEntry), /HOOK_ENTRY_MISSING/);
  assert.doesNotMatch(text, /HOOK_[A-Z_]+ \S*\/good\b/);
});

Deno.test("`hookbox validate` exits 0 for valid hook folders, given as a hook or a folder of hooks", async () => {
  await using tree = await tempTree();
  const one = await promptHook(tree, "a", "one");
  await promptHook(tree, "b", "two");
  await promptHook(tree, "b", "three");
  const run = await cli(tree, ["validate", one, `${tree.root}/b`]);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  assert.doesNotMatch(run.stdout + run.stderr, /HOOK_[A-Z_]+/);
  const withBad = await cli(tree, ["validate", one, `${tree.root}/missing`]);
  assert.equal(withBad.code, 1);
});

Deno.test("`hookbox list --work-dir` shows the hooks in dispatch order per event", async () => {
  await using tree = await tempTree();
  const work = await tree.dir("work");
  const other = await tree.dir("other");
  await promptHook(tree, "work/.agents/hooks", "zeta-project");
  await promptHook(tree, "work/.agents/hooks", "alpha-project");
  await promptHook(tree, "work/.agents/hooks", "urgent", { priority: 900 });
  await promptHook(tree, "work/.agents/hooks", "tool-only", { trigger: "pre-tool-call" });
  await promptHook(tree, "xdg/agents/hooks", "user-hook");
  await promptHook(tree, "other/.agents/hooks", "elsewhere");
  const run = await cli(tree, ["list", "--work-dir", work], { cwd: other });
  assert.equal(run.code, 0, run.stderr);
  const sections = new Map<string, string>();
  let current = "";
  for (const line of run.stdout.split("\n")) {
    if (/^\S/.test(line)) sections.set(current = line.trim(), "");
    else if (current) sections.set(current, `${sections.get(current)}${line}\n`);
  }
  const session = sections.get("pre-session") ?? "";
  const order = ["urgent", "user-hook", "alpha-project", "zeta-project"];
  const positions = order.map((name) => session.indexOf(name));
  assert.ok(positions.every((p) => p >= 0), session);
  assert.deepEqual([...positions].sort((x, y) => x - y), positions, session);
  assert.doesNotMatch(session, /tool-only/);
  assert.match(sections.get("pre-tool-call") ?? "", /tool-only/);
  assert.doesNotMatch(run.stdout, /elsewhere/);
});

Deno.test("`hookbox validate` without DIR checks the user and project hook folders", async () => {
  await using tree = await tempTree();
  const user = await tree.hook("xdg/agents/hooks", "user-bad", {
    frontmatter: { timeout: 50 },
    files: { "scripts/run.sh": "" },
  });
  const project = await tree.hook("work/.agents/hooks", "project-bad", {
    frontmatter: { trigger: "pre-nothing" },
    files: { "scripts/run.sh": "" },
  });
  const run = await cli(tree, ["validate"], { cwd: `${tree.root}/work` });
  assert.equal(run.code, 1, run.stdout + run.stderr);
  const text = run.stdout + run.stderr;
  assert.match(text, new RegExp(`HOOK_MANIFEST_INVALID ${user}/HOOK.md.*timeout`));
  assert.match(text, new RegExp(`HOOK_MANIFEST_INVALID ${project}/HOOK.md.*trigger`));
});

Deno.test("`hookbox dispatch` warns when a hook's stdout starts with { but is not JSON (read as text)", async () => {
  const { corpus } = await import("../runtime-wasm/_corpus.ts");
  const tree = await tempTree();
  const dir = await tree.dir("hooks/sloppy");
  await Deno.writeTextFile(
    `${dir}/HOOK.md`,
    "---\nname: sloppy\ndescription: d\ntrigger: pre-tool-call\n---\n",
  );
  await Deno.writeFile(`${dir}/plugin.wasm`, await corpus("brace_text_wasi"));
  const run = await runCli(["dispatch", "--hooks-dir", `${tree.root}/hooks`], {
    cwd: tree.root,
    stdin: JSON.stringify(toolEvent()),
  });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.decision, "allow");
  assert.equal(result.hooks[0].outcome, "ok");
  assert.match(result.hooks[0].detail, /stdout starts with "\{" but is not JSON .*read as text/);
  assert.match(run.stderr, /hookbox: warning: hook "sloppy" \(platform\): stdout starts with "\{"/);
});
