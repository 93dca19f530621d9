import assert from "node:assert/strict";
import { runFailure } from "../../../packages/core/runtime/failure.ts";
import { exits2, fakeHook, prints, toolEvent } from "../../_helpers.ts";
import { names, recordOf, run } from "./_run.ts";

const chain = (...specs: Array<Record<string, unknown> & { name: string }>) =>
  specs.map((s, i) => fakeHook({ priority: 900 - i * 10, ...s }));

Deno.test("`dispatch()` chains modified_input: each hook sees the input as modified before it", async () => {
  const hooks = chain({ name: "first" }, { name: "second" }, { name: "third" }, { name: "last" });
  const { result, runtime } = await run(hooks, toolEvent({ tool_input: { command: "ls" } }), {
    first: prints({ modified_input: { command: "ls -l" } }),
    second: prints({ modified_input: { command: "ls -l --color" } }),
    third: prints({ reason: "looked only" }),
  });
  const seen = runtime.calls.map((c) => c.event.tool_input);
  assert.deepEqual(seen, [
    { command: "ls" },
    { command: "ls -l" },
    { command: "ls -l --color" },
    { command: "ls -l --color" },
    // SPEC §4.6: the first hook did not see the second's rewrite; it is checked again.
    { command: "ls -l --color" },
  ]);
  assert.equal(runtime.calls[4]?.hook, "first");
  assert.deepEqual(result.modified_input, { command: "ls -l --color" });
  assert.equal(result.decision, "allow");
});

Deno.test("`dispatch()` chains modified_input as the prompt of pre-agent-turn", async () => {
  const hooks = chain({ name: "a", trigger: "pre-agent-turn" }, {
    name: "b",
    trigger: "pre-agent-turn",
  });
  const turn = { event_type: "pre-agent-turn", session_id: "s", prompt: "hello" };
  const { result, runtime } = await run(hooks, turn, {
    a: prints({ modified_input: "hello [checked]" }),
  });
  assert.equal(runtime.calls[1]?.event.prompt, "hello [checked]");
  assert.equal(result.modified_input, "hello [checked]");
});

Deno.test("`dispatch()` reports modified_input of the wrong kind as an error and ignores it", async () => {
  const hooks = chain({ name: "bad" }, { name: "next" });
  const { result, runtime } = await run(hooks, toolEvent(), {
    bad: prints({ modified_input: "rm -rf /" }),
  });
  assert.equal(recordOf(result, "bad").outcome, "error");
  assert.match(recordOf(result, "bad").detail ?? "", /modified_input/);
  assert.deepEqual(runtime.calls[1]?.event.tool_input, { command: "ls -la" });
  assert.equal(result.modified_input, null);
  assert.equal(result.decision, "allow");

  const turn = { event_type: "pre-agent-turn", session_id: "s", prompt: "hi" };
  const t = await run([fakeHook({ name: "bad", trigger: "pre-agent-turn" })], turn, {
    bad: prints({ modified_input: { prompt: "x" } }),
  });
  assert.equal(recordOf(t.result, "bad").outcome, "error");
  assert.equal(t.result.modified_input, null);
});

Deno.test("`dispatch()` applies modified_output to post-tool-call", async () => {
  const hooks = chain({ name: "redact", trigger: "post-tool-call" }, {
    name: "after",
    trigger: "post-tool-call",
  });
  const event = toolEvent({ event_type: "post-tool-call", tool_output: "key=SECRET" });
  const { result, runtime } = await run(hooks, event, {
    redact: prints({ modified_output: "key=***" }),
  });
  assert.equal(runtime.calls[1]?.event.tool_output, "key=***");
  assert.equal(result.modified_output, "key=***");
});

Deno.test("`dispatch()` merges store into the run's shared store, visible to later hooks", async () => {
  const hooks = chain({ name: "a" }, { name: "b" }, { name: "c" });
  const { result, runtime } = await run(hooks, toolEvent({ store: { from_agent: 1 } }), {
    a: prints({ store: { count: 1, a: true } }),
    b: prints({ store: { count: 2 } }),
  });
  assert.deepEqual(runtime.calls.map((c) => c.event.store), [
    { from_agent: 1 },
    { from_agent: 1, count: 1, a: true },
    { from_agent: 1, count: 2, a: true },
  ]);
  assert.deepEqual(result.store, { from_agent: 1, count: 2, a: true });
});

Deno.test("`dispatch()` stops at the first blocker", async () => {
  const hooks = chain({ name: "ok-1" }, { name: "blocker" }, { name: "blocker-2" }, {
    name: "never",
  });
  const { result, called } = await run(hooks, toolEvent(), {
    blocker: exits2("rm -rf is not allowed\n"),
    "blocker-2": exits2("second"),
  });
  assert.deepEqual(called, ["ok-1", "blocker"]);
  assert.deepEqual(names(result), ["ok-1", "blocker"]);
  assert.equal(result.decision, "block");
  assert.equal(result.blocked_by, "blocker");
  assert.equal(result.reason, "rm -rf is not allowed");
  const record = recordOf(result, "blocker");
  assert.equal(record.outcome, "block");
  assert.equal(record.exit_code, 2);
  assert.equal(record.stderr, "rm -rf is not allowed\n");
});

Deno.test("`dispatch()` blocks on JSON `decision: block` and its `deny` alias, with the JSON reason", async () => {
  for (const decision of ["block", "deny"]) {
    const hooks = chain({ name: "json" }, { name: "never" });
    const { result, called } = await run(hooks, toolEvent(), {
      json: () => ({ exitCode: 0, stdout: JSON.stringify({ decision, reason: "not today" }) }),
    });
    assert.deepEqual(called, ["json"], decision);
    assert.equal(result.decision, "block");
    assert.equal(result.reason, "not today");
    assert.equal(result.blocked_by, "json");
    assert.equal(recordOf(result, "json").outcome, "block");
  }
});

Deno.test("`dispatch()` does not apply modified_input from a blocking hook", async () => {
  const { result } = await run(chain({ name: "b" }), toolEvent(), {
    b: prints({ decision: "block", reason: "no", modified_input: { command: "x" } }),
  });
  assert.equal(result.decision, "block");
  assert.equal(result.modified_input, null);
});

Deno.test("`dispatch()` fails open on error, other exit codes, timeout and limits", async () => {
  const failures = {
    crash: () => ({ exitCode: 1, stderr: "boom" }),
    exit3: () => ({ exitCode: 3 }),
    trap: () => ({ exitCode: null, failure: runFailure("TRAP", "x") }),
    slow: () => ({ exitCode: null, failure: runFailure("TIMEOUT") }),
    big: () => ({ exitCode: null, failure: runFailure("LIMIT_OUTPUT") }),
  };
  const hooks = chain(...Object.keys(failures).map((name) => ({ name })), { name: "after" });
  const { result, called } = await run(hooks, toolEvent(), failures);
  assert.deepEqual(called, [...Object.keys(failures), "after"]);
  assert.equal(result.decision, "allow");
  assert.equal(result.blocked_by, null);
  assert.deepEqual(result.hooks.map((h) => [h.name, h.outcome]), [
    ["crash", "error"],
    ["exit3", "error"],
    ["trap", "error"],
    ["slow", "timeout"],
    ["big", "limit"],
    ["after", "ok"],
  ]);
  assert.equal(recordOf(result, "crash").exit_code, 1);
  assert.equal(recordOf(result, "crash").stderr, "boom");
  assert.match(
    recordOf(result, "big").detail ?? "",
    /^output: \d+ KiB \(limits\.output_kb in HOOK\.md/,
  );
  assert.equal(recordOf(result, "big").code, "LIMIT_OUTPUT");
  assert.equal(recordOf(result, "exit3").code, "EXIT_CODE");
  assert.equal(recordOf(result, "exit3").detail, "exit code: 3");
});

Deno.test("`dispatch()` turns a failure into a block when the hook is on_error: closed", async () => {
  const failures = {
    error: () => ({ exitCode: 1 }),
    timeout: () => ({ exitCode: null, failure: runFailure("TIMEOUT") }),
    limit: () => ({ exitCode: null, failure: runFailure("LIMIT_MEMORY") }),
    invalid: prints({ decision: "maybe" }),
  };
  for (const [name, behaviour] of Object.entries(failures)) {
    const hooks = chain({ name, on_error: "closed" }, { name: "never" });
    const { result, called } = await run(hooks, toolEvent(), { [name]: behaviour });
    assert.deepEqual(called, [name]);
    assert.equal(result.decision, "block", name);
    assert.equal(result.blocked_by, name);
    assert.ok(result.reason, name);
    assert.deepEqual(names(result), [name]);
    assert.equal(recordOf(result, name).outcome, name === "invalid" ? "error" : name);
  }
});

Deno.test("`dispatch()` keeps non-JSON stdout as text with outcome ok", async () => {
  const { result } = await run(chain({ name: "talker" }), toolEvent(), {
    talker: () => ({ exitCode: 0, stdout: "all good, nothing to see\n" }),
  });
  const record = recordOf(result, "talker");
  assert.equal(record.outcome, "ok");
  assert.equal(record.stdout, "all good, nothing to see\n");
  assert.equal(result.decision, "allow");
});

Deno.test("`dispatch()` records invalid control JSON as an error and fails open", async () => {
  const { result, called } = await run(chain({ name: "maybe" }, { name: "after" }), toolEvent(), {
    maybe: prints({ decision: "maybe" }),
  });
  assert.deepEqual(called, ["maybe", "after"]);
  assert.equal(recordOf(result, "maybe").outcome, "error");
  assert.match(recordOf(result, "maybe").detail ?? "", /decision/);
  assert.equal(result.decision, "allow");
});

Deno.test("`dispatch()` accumulates inject, disable_tools and enable_tools", async () => {
  const hooks = chain({ name: "a" }, { name: "b" });
  const { result } = await run(hooks, toolEvent(), {
    a: prints({
      inject: [{ role: "system", content: "one" }],
      disable_tools: ["Bash"],
      enable_tools: ["Read"],
    }),
    b: prints({
      inject: [{ role: "user", content: "two", persistent: true }],
      disable_tools: ["Write"],
      enable_tools: ["Grep"],
    }),
  });
  assert.deepEqual(result.inject.map((m) => [m.role, m.content, m.persistent]), [
    ["system", "one", false],
    ["user", "two", true],
  ]);
  assert.deepEqual(result.disable_tools, ["Bash", "Write"]);
  assert.deepEqual(result.enable_tools, ["Read", "Grep"]);
});

Deno.test("`dispatch()` skips a subprocess hook when subprocesses are not permitted", async () => {
  const entry = { runtime: "subprocess" as const, path: "/fake/run.sh", command: ["bash"] };
  const hooks = [fakeHook({ name: "sub" }, { entry }), fakeHook({ name: "after", priority: 1 })];
  const { result, called } = await run(hooks, toolEvent());
  assert.deepEqual(called, ["after"]);
  const record = recordOf(result, "sub");
  assert.equal(record.outcome, "skipped");
  assert.equal(record.detail, "subprocess not permitted");
  assert.equal(record.runtime, "subprocess");
  assert.equal(result.decision, "allow");

  const allowed = await run(hooks, toolEvent(), {}, { allowSubprocess: true });
  assert.deepEqual(allowed.called, ["sub", "after"]);
  assert.equal(recordOf(allowed.result, "sub").outcome, "ok");
});

Deno.test("`dispatch()` blocks on a skipped subprocess hook that is on_error: closed", async () => {
  const entry = { runtime: "subprocess" as const, path: "/fake/run.sh", command: ["bash"] };
  const hooks = [
    fakeHook({ name: "sub", on_error: "closed" }, { entry }),
    fakeHook({ name: "never", priority: 1 }),
  ];
  const { result, called } = await run(hooks, toolEvent());
  assert.deepEqual(called, []);
  assert.equal(result.decision, "block");
  assert.equal(result.blocked_by, "sub");
  assert.equal(recordOf(result, "sub").outcome, "skipped");
});

Deno.test("`dispatch()` injects the body of a prompt hook", async () => {
  const hook = fakeHook(
    { name: "style", trigger: "pre-agent-turn", inject: { role: "system", persistent: true } },
    { entry: { runtime: "prompt" }, body: "Always answer in French." },
  );
  const turn = { event_type: "pre-agent-turn", session_id: "s", prompt: "hi" };
  const { result, called } = await run([hook], turn);
  assert.deepEqual(called, []);
  assert.equal(result.inject.length, 1);
  assert.equal(result.inject[0]?.role, "system");
  assert.equal(result.inject[0]?.content, "Always answer in French.");
  assert.equal(result.inject[0]?.persistent, true);
  assert.equal(recordOf(result, "style").runtime, "prompt");
  assert.equal(recordOf(result, "style").outcome, "ok");
});

Deno.test("`dispatch()` records a runtime that never answers as a timeout and goes on", async () => {
  const hooks = chain({ name: "stuck", timeout: 100 }, { name: "after" });
  const { result, called } = await run(hooks, toolEvent(), {
    stuck: () => new Promise(() => {}),
  });
  assert.deepEqual(called, ["stuck", "after"]);
  assert.equal(recordOf(result, "stuck").outcome, "timeout");
  assert.equal(result.decision, "allow");
});

Deno.test("`dispatch()` hands unknown event fields to the hook untouched", async () => {
  const extra = { x_trace: { id: "abc", spans: [1, 2, { n: null }] }, agent_version: "9.1" };
  const input = { command: "ls", x_flag: { deep: [true] } };
  const { runtime } = await run(chain({ name: "h" }), toolEvent({ ...extra, tool_input: input }));
  const sent = JSON.parse(runtime.calls[0]?.input ?? "null");
  assert.deepEqual(sent.x_trace, extra.x_trace);
  assert.equal(sent.agent_version, "9.1");
  assert.deepEqual(sent.tool_input, input);
});

Deno.test("`dispatch()` records but never applies a block on post-llm-call-failure", async () => {
  const trigger = "post-llm-call-failure";
  const hooks = chain(
    { name: "blocker", trigger },
    { name: "closed", trigger, on_error: "closed" },
    {
      name: "after",
      trigger,
    },
  );
  const event = { event_type: trigger, session_id: "s", error: "rate limited" };
  const { result, called } = await run(hooks, event, {
    blocker: exits2("no"),
    closed: () => ({ exitCode: 1 }),
  });
  assert.deepEqual(called, ["blocker", "closed", "after"]);
  assert.equal(result.decision, "allow");
  assert.equal(result.blocked_by, null);
  assert.equal(recordOf(result, "blocker").outcome, "block");
  assert.equal(recordOf(result, "closed").outcome, "error");
});
