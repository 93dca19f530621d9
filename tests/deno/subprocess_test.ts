import assert from "node:assert/strict";
import { createSubprocessRuntime } from "../../packages/deno/subprocess.ts";
import { createExecutor, type Runtime } from "../../packages/hookbox/deno.ts";
import { type HookSpec, ROOT, sh, type TempTree, tempTree, toolEvent } from "../_helpers.ts";

/** An executor that runs real subprocesses from `<tree>/project` only. */
function executorFor(tree: TempTree, allowSubprocess = true, subprocess?: Runtime) {
  return createExecutor({
    allowSubprocess,
    userDir: null,
    projectDir: `${tree.root}/project`,
    workDir: tree.root,
    ...(subprocess ? { runtimes: { subprocess } } : {}),
  });
}

/** Writes a hook whose scripts/run.sh is `script`, triggered on pre-tool-call for `tool`. */
function shHook(tree: TempTree, name: string, script: string, frontmatter = {}, tool?: string) {
  const spec: HookSpec = {
    frontmatter: { ...(tool ? { matcher: { tool: `^${tool}$` } } : {}), ...frontmatter },
    files: { "scripts/run.sh": script },
  };
  return tree.hook("project", name, spec);
}

/** True when `pid` no longer runs (gone, or a zombie waiting to be reaped). */
async function isGone(pid: number): Promise<boolean> {
  let stat: string;
  try {
    stat = await Deno.readTextFile(`/proc/${pid}/stat`);
  } catch {
    return true;
  }
  const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  if (state === "Z" || state === "X") return true;
  try {
    Deno.kill(pid, "SIGCONT");
    return false;
  } catch {
    return true;
  }
}

Deno.test("subprocess hooks get the event JSON on stdin", async () => {
  await using tree = await tempTree();
  await shHook(tree, "echo-stdin", "cat >&2");
  const executor = executorFor(tree);
  const event = toolEvent({ x_custom: { keep: ["me", 1] }, tool_input: { command: "ls", z: 1 } });
  const result = await executor.dispatch(event);
  await executor.close();
  const record = result.hooks[0];
  assert.equal(record?.outcome, "ok");
  const seen = JSON.parse(record?.stderr ?? "");
  assert.equal(seen.event_type, "pre-tool-call");
  assert.equal(seen.session_id, "sess-1");
  assert.deepEqual(seen.tool_input, { command: "ls", z: 1 });
  assert.deepEqual(seen.x_custom, { keep: ["me", 1] });
});

Deno.test("subprocess hooks run with only PATH and HOOKBOX_* in their environment", async () => {
  await using tree = await tempTree();
  await shHook(tree, "print-env", `tr '\\0' '\\n' < /proc/$$/environ >&2`);
  const executor = executorFor(tree);
  const result = await executor.dispatch(toolEvent({ work_dir: tree.root }));
  await executor.close();
  const lines = (result.hooks[0]?.stderr ?? "").split("\n").filter(Boolean);
  const env = Object.fromEntries(
    lines.map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  );
  assert.ok(Deno.env.get("HOME"), "precondition: the test process has HOME");
  assert.equal(env.HOME, undefined);
  for (const key of Object.keys(env)) {
    assert.ok(key === "PATH" || key.startsWith("HOOKBOX_"), `unexpected variable ${key}`);
  }
  assert.ok(env.PATH);
  assert.equal(env.HOOKBOX_SESSION_ID, "sess-1");
  assert.equal(env.HOOKBOX_WORK_DIR, tree.root);
});

Deno.test("subprocess hooks run in their hook folder", async () => {
  await using tree = await tempTree();
  const dir = await shHook(tree, "where", "pwd >&2");
  const executor = executorFor(tree);
  const result = await executor.dispatch(toolEvent());
  await executor.close();
  assert.equal(result.hooks[0]?.stderr.trim(), dir);
});

Deno.test("subprocess hooks block with exit 2 and stderr as the reason", async () => {
  await using tree = await tempTree();
  await shHook(tree, "block-rm", 'echo "rm -rf is not allowed" >&2; exit 2', { priority: 200 });
  await shHook(tree, "never", "exit 0");
  const executor = executorFor(tree);
  const result = await executor.dispatch(toolEvent());
  await executor.close();
  assert.equal(result.decision, "block");
  assert.equal(result.blocked_by, "block-rm");
  assert.equal(result.reason, "rm -rf is not allowed");
  assert.deepEqual(result.hooks.map((h) => [h.name, h.runtime, h.exit_code]), [
    ["block-rm", "subprocess", 2],
  ]);
});

Deno.test("a crashing subprocess hook fails open", async () => {
  await using tree = await tempTree();
  await shHook(tree, "crash", "echo oops >&2; exit 1", { priority: 200 });
  await shHook(tree, "after", 'echo \'{"store":{"after":true}}\'');
  const executor = executorFor(tree);
  const result = await executor.dispatch(toolEvent());
  await executor.close();
  assert.equal(result.decision, "allow");
  assert.deepEqual(result.hooks.map((h) => [h.name, h.outcome, h.exit_code]), [
    ["crash", "error", 1],
    ["after", "ok", 0],
  ]);
  assert.equal(result.hooks[0]?.stderr, "oops\n");
  assert.deepEqual(result.store, { after: true });
});

Deno.test("subprocess hooks run scripts/run.py with python3 and an executable scripts/run", async () => {
  await using tree = await tempTree();
  await tree.hook("project", "py", {
    frontmatter: { priority: 200 },
    files: {
      "scripts/run.py": [
        "import json, sys",
        "event = json.load(sys.stdin)",
        "cmd = event['tool_input']['command'] + ' --from-py'",
        "print(json.dumps({'modified_input': {'command': cmd}}))",
      ].join("\n"),
    },
  });
  await tree.hook("project", "exe", {
    files: {
      "scripts/run": sh(
        `python3 -c 'import json,sys; e=json.load(sys.stdin); print(json.dumps({"modified_input": {"command": e["tool_input"]["command"] + " --from-exe"}}))'`,
      ),
    },
  });
  const executor = executorFor(tree);
  const result = await executor.dispatch(toolEvent({ tool_input: { command: "ls" } }));
  await executor.close();
  // The first rewriter checks the second's rewrite (SPEC §4.6); its own new rewrite is not applied.
  assert.deepEqual(result.hooks.map((h) => [h.name, h.outcome]), [
    ["py", "ok"],
    ["exe", "ok"],
    ["py", "ok"],
  ]);
  assert.deepEqual(result.modified_input, { command: "ls --from-py --from-exe" });
});

/** Host PIDs of live processes whose command line contains `marker`. */
async function processesWith(marker: string): Promise<number[]> {
  const found: number[] = [];
  for await (const entry of Deno.readDir("/proc")) {
    const pid = Number(entry.name);
    if (!Number.isInteger(pid)) continue;
    try {
      const cmdline = await Deno.readTextFile(`/proc/${pid}/cmdline`);
      if (cmdline.includes(marker) && !(await isGone(pid))) found.push(pid);
    } catch { /* it ended meanwhile */ }
  }
  return found;
}

/** Waits up to `ms` for every process carrying `marker` to end; returns the survivors. */
async function survivors(marker: string, ms = 2000): Promise<number[]> {
  const until = Date.now() + ms;
  let left = await processesWith(marker);
  while (left.length > 0 && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 50));
    left = await processesWith(marker);
  }
  return left;
}

/** A `sleep` no other process runs: its argument marks the hook's processes. */
function marker(): string {
  return `${1000 + Math.floor(Math.random() * 9000)}.${Date.now() % 100000}`;
}

Deno.test("a subprocess hook that sleeps past its timeout is killed with its whole process group", async () => {
  await using tree = await tempTree();
  const mark = marker();
  await shHook(tree, "sleeper", `sleep ${mark} &\nsleep ${mark}`, { timeout: 200, priority: 200 });
  await shHook(tree, "after", "exit 0");
  const executor = executorFor(tree);
  try {
    const result = await executor.dispatch(toolEvent());
    assert.deepEqual(result.hooks.map((h) => [h.name, h.outcome]), [
      ["sleeper", "timeout"],
      ["after", "ok"],
    ]);
    assert.equal(result.hooks[0]?.exit_code, null);
    assert.equal(result.decision, "allow");
    assert.deepEqual(await survivors(mark), [], "the background sleep still runs");
  } finally {
    await executor.close();
    for (const pid of await processesWith(mark)) Deno.kill(pid, "SIGKILL");
  }
});

Deno.test("a subprocess hook whose dispatch is killed mid-call still ends at its timeout", async () => {
  // Source of the attack: the process running the hook dies first (an agent ends the hook
  // call, Ctrl-C), so its timer never fires; the hook ran on for good.
  await using tree = await tempTree();
  const mark = marker();
  await shHook(tree, "sleeper", `sleep ${mark}`, { timeout: 1000 });
  const script = `${tree.root}/dispatch.ts`;
  await Deno.writeTextFile(
    script,
    `import { createExecutor } from ${JSON.stringify(`${ROOT}/packages/hookbox/deno.ts`)};\n` +
      `const executor = createExecutor(${
        JSON.stringify({
          allowSubprocess: true,
          userDir: null,
          projectDir: `${tree.root}/project`,
          workDir: tree.root,
        })
      });\nawait executor.dispatch(${JSON.stringify(toolEvent())});\n`,
  );
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--config", `${ROOT}/deno.json`, script],
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    for (let i = 0; i < 600 && (await processesWith(mark)).length === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok((await processesWith(mark)).length > 0, "the hook started");
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* ended by itself: the assertion above says why */ }
    await child.status;
  }
  try {
    // Its timeout is 1 s; the wrapper kills it 2 s after that at the latest.
    assert.deepEqual(await survivors(mark, 15_000), [], "the hook outlived its timeout");
  } finally {
    for (const pid of await processesWith(mark)) Deno.kill(pid, "SIGKILL");
  }
});

// Source of the attack: a hook that moves a child into a new session (setsid),
// out of the process group hookbox kills, and exits or stalls.
const ESCAPE = (mark: string, then: string) =>
  `setsid sh -c 'sleep ${mark}' </dev/null >/dev/null 2>&1 &\nsleep 0.2\n${then}`;

for (const then of ["exit 0", "sleep 30"]) {
  Deno.test(`a subprocess hook's setsid child dies with it in a PID namespace (${then})`, async () => {
    await using tree = await tempTree();
    const mark = marker();
    await shHook(tree, "escape", ESCAPE(mark, then), { timeout: 1000 });
    const runtime = createSubprocessRuntime();
    assert.equal(await runtime.containment(), "pid-namespace", "this host can make PID namespaces");
    const executor = executorFor(tree);
    try {
      const result = await executor.dispatch(toolEvent());
      assert.equal(result.hooks[0]?.outcome, then === "exit 0" ? "ok" : "timeout");
      assert.deepEqual(await survivors(mark), [], "the setsid child outlived its hook");
    } finally {
      await executor.close();
      for (const pid of await processesWith(mark)) Deno.kill(pid, "SIGKILL");
    }
  });
}

Deno.test("with containment: process-group a setsid child escapes (what docs/SECURITY.md states)", async () => {
  await using tree = await tempTree();
  const mark = marker();
  await shHook(tree, "escape", ESCAPE(mark, "exit 0"));
  const runtime = createSubprocessRuntime({ containment: "process-group" });
  assert.equal(await runtime.containment(), "process-group");
  const executor = executorFor(tree, true, runtime);
  try {
    const result = await executor.dispatch(toolEvent());
    assert.equal(result.hooks[0]?.outcome, "ok");
    assert.ok((await processesWith(mark)).length > 0, "the setsid child is still running");
  } finally {
    await executor.close();
    for (const pid of await processesWith(mark)) Deno.kill(pid, "SIGKILL");
  }
});

Deno.test("a subprocess hook sees only its own processes in a PID namespace", async () => {
  await using tree = await tempTree();
  await shHook(tree, "ps", "ls /proc | grep -c '^[0-9]' >&2");
  const executor = executorFor(tree);
  const result = await executor.dispatch(toolEvent());
  await executor.close();
  const seen = Number(result.hooks[0]?.stderr.trim());
  assert.ok(seen > 0 && seen < 6, `the hook sees ${seen} processes`);
});

Deno.test("a subprocess hook that times out blocks when on_error: closed", async () => {
  await using tree = await tempTree();
  await shHook(tree, "sleeper", "exec sleep 30", { timeout: 200, on_error: "closed" });
  const executor = executorFor(tree);
  const result = await executor.dispatch(toolEvent());
  await executor.close();
  assert.equal(result.decision, "block");
  assert.equal(result.blocked_by, "sleeper");
  assert.equal(result.hooks[0]?.outcome, "timeout");
});

Deno.test("a subprocess hook flooding stdout hits the output limit and the executor carries on", async () => {
  await using tree = await tempTree();
  await shHook(tree, "flood", "yes flood", { limits: { output_kb: 4 } }, "Flood");
  await shHook(tree, "flood-err", "yes flood >&2", { limits: { output_kb: 4 } }, "FloodErr");
  await shHook(tree, "echo", 'echo \'{"reason":"still here"}\'', {}, "Echo");
  const executor = executorFor(tree);
  try {
    for (const tool of ["Flood", "FloodErr"]) {
      const flooded = await executor.dispatch(toolEvent({ tool_name: tool }));
      const record = flooded.hooks[0];
      assert.equal(record?.outcome, "limit", tool);
      assert.match(record?.detail ?? "", /^output: \d+ KiB \(limits\.output_kb in HOOK\.md/);
      assert.ok((record?.stdout.length ?? 0) + (record?.stderr.length ?? 0) <= 2 * 4 * 1024);
      assert.equal(flooded.decision, "allow");
    }
    const next = await executor.dispatch(toolEvent({ tool_name: "Echo" }));
    assert.deepEqual(next.hooks.map((h) => [h.name, h.outcome]), [["echo", "ok"]]);
    assert.equal(next.reason, "still here");
  } finally {
    await executor.close();
  }
});

Deno.test("subprocess hooks are skipped unless subprocesses are permitted", async () => {
  await using tree = await tempTree();
  const dir = await shHook(tree, "marker", "touch ran");
  const executor = executorFor(tree, false);
  const result = await executor.dispatch(toolEvent());
  await executor.close();
  assert.equal(result.hooks[0]?.outcome, "skipped");
  assert.equal(result.hooks[0]?.detail, "subprocess not permitted");
  assert.equal(await Deno.stat(`${dir}/ran`).then(() => true, () => false), false);
});

Deno.test("async subprocess hooks report to onAsyncResult before `close()` resolves", async () => {
  await using tree = await tempTree();
  await shHook(tree, "audit", 'cat > seen.json; echo "audited" >&2; exit 2', { async: true });
  const records: Array<[string, string, string]> = [];
  const executor = createExecutor({
    allowSubprocess: true,
    userDir: null,
    projectDir: `${tree.root}/project`,
    onAsyncResult: (record) => records.push([record.name, record.outcome, record.stderr]),
  });
  const result = await executor.dispatch(toolEvent());
  assert.equal(result.decision, "allow");
  assert.deepEqual(result.hooks.map((h) => [h.name, h.outcome]), [["audit", "async"]]);
  await executor.close();
  assert.deepEqual(records, [["audit", "block", "audited\n"]]);
  const seen = JSON.parse(await Deno.readTextFile(`${tree.root}/project/audit/seen.json`));
  assert.equal(seen.tool_name, "Bash");
});
