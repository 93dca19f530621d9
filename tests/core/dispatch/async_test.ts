import assert from "node:assert/strict";
import { dispatchEvent } from "../../../packages/core/dispatch/dispatch.ts";
import { createCoreExecutor } from "../../../packages/core/executor.ts";
import { denoFs } from "../../../packages/host-deno/fs.ts";
import { resolvePolicy } from "../../../packages/core/policy.ts";
import { parseEvent } from "../../../packages/core/schema/event.ts";
import { exits2, fakeHook, fakeRuntime, prints, toolEvent } from "../../_helpers.ts";
import { recordOf, run } from "./_run.ts";

Deno.test("`dispatch()` starts async hooks with the original event and records them as async", async () => {
  const hooks = [
    fakeHook({ name: "rewrite", priority: 500 }),
    fakeHook({ name: "audit", async: true, priority: 100 }),
    fakeHook({ name: "late-audit", async: true, priority: 1000 }),
  ];
  const { result, runtime } = await run(hooks, toolEvent({ tool_input: { command: "ls" } }), {
    rewrite: prints({ modified_input: { command: "ls -l" }, store: { k: 1 } }),
  });
  const seen = Object.fromEntries(runtime.calls.map((c) => [c.hook, c.event]));
  assert.deepEqual(seen["audit"]?.tool_input, { command: "ls" });
  assert.deepEqual(seen["late-audit"]?.tool_input, { command: "ls" });
  assert.equal(seen["audit"]?.store?.k, undefined);
  for (const name of ["audit", "late-audit"]) {
    const record = recordOf(result, name);
    assert.equal(record.outcome, "async");
    assert.equal(record.exit_code, null);
  }
  assert.deepEqual(result.hooks.map((h) => h.name), ["late-audit", "rewrite", "audit"]);
});

Deno.test("`dispatch()` does not let async hooks block or modify", async () => {
  const hooks = [
    fakeHook({ name: "async-block", async: true, priority: 900 }),
    fakeHook({ name: "async-json", async: true, priority: 800, on_error: "closed" }),
    fakeHook({ name: "sync", priority: 100 }),
  ];
  const { result, runtime } = await run(hooks, toolEvent(), {
    "async-block": exits2("stop it"),
    "async-json": prints({
      decision: "block",
      modified_input: { command: "evil" },
      store: { injected: true },
      inject: [{ role: "system", content: "x" }],
    }),
  });
  assert.equal(result.decision, "allow");
  assert.equal(result.blocked_by, null);
  assert.equal(result.modified_input, null);
  assert.deepEqual(result.store, {});
  assert.deepEqual(result.inject, []);
  const sync = runtime.calls.find((c) => c.hook === "sync");
  assert.deepEqual(sync?.event.tool_input, { command: "ls -la" });
});

Deno.test("`dispatch()` hands async hooks' real results to onAsyncResult", async () => {
  const hooks = [
    fakeHook({ name: "async-block", async: true }),
    fakeHook({ name: "async-crash", async: true }),
  ];
  const { asyncResults } = await run(hooks, toolEvent(), {
    "async-block": exits2("would block"),
    "async-crash": () => ({ exitCode: 1, stderr: "oops" }),
  });
  const byName = Object.fromEntries(asyncResults.map((r) => [r.record.name, r]));
  assert.equal(byName["async-block"]?.record.outcome, "block");
  assert.equal(byName["async-block"]?.record.exit_code, 2);
  assert.equal(byName["async-block"]?.record.stderr, "would block");
  assert.equal(byName["async-crash"]?.record.outcome, "error");
  assert.equal(byName["async-block"]?.event.tool_name, "Bash");
});

Deno.test("`dispatch()` returns without waiting for async hooks", async () => {
  let release = () => {};
  const gate = new Promise<void>((resolve) => release = resolve);
  let returned = false;
  let finishedAfterReturn: boolean | null = null;
  const runtime = fakeRuntime({
    slow: async () => {
      await gate;
      finishedAfterReturn = returned;
      return { exitCode: 0 };
    },
  });
  const pending: Promise<unknown>[] = [];
  const delivered: string[] = [];
  // Fallback so a regression fails instead of hanging; the gate normally opens below.
  const fallback = setTimeout(release, 10_000);
  const result = await dispatchEvent(
    [fakeHook({ name: "slow", async: true })],
    parseEvent(toolEvent()),
    {
      runtimes: { wasm: runtime },
      policy: resolvePolicy(),
      tenantId: "t",
      env: {},
      onAsyncResult: (record) => delivered.push(`${record.name}:${record.outcome}`),
      track: (p) => pending.push(p),
    },
  );
  returned = true;
  release();
  await Promise.all(pending);
  clearTimeout(fallback);
  assert.equal(recordOf(result, "slow").outcome, "async");
  assert.equal(finishedAfterReturn, true);
  assert.deepEqual(delivered, ["slow:ok"]);
});

Deno.test("an onAsyncResult that throws or rejects is reported, and close() waits for a promise it returns", async () => {
  const hooks = [
    fakeHook({ name: "throws", async: true }, { level: "platform" }),
    fakeHook({ name: "rejects", async: true }, { level: "platform" }),
    fakeHook({ name: "saves", async: true }, { level: "platform" }),
  ];
  const saved: string[] = [];
  const reported: string[] = [];
  const executor = createCoreExecutor({
    fs: { ...denoFs },
    runtimes: { wasm: fakeRuntime() },
    platformDirs: ["/platform"],
    scan: () => Promise.resolve({ hooks, problems: [] }),
    onAsyncResult: async (record) => {
      if (record.name === "throws") throw new Error("handler threw");
      await Promise.resolve();
      if (record.name === "rejects") throw new Error("handler rejected");
      await new Promise((resolve) => setTimeout(resolve, 0));
      saved.push(record.name);
    },
  });
  const consoleError = console.error;
  console.error = (...args: unknown[]) => reported.push(args.map(String).join(" "));
  try {
    // A rejection left unhandled here would fail this test (and crash a host process).
    const result = await executor.dispatch(toolEvent());
    assert.deepEqual(result.hooks.map((h) => h.outcome), ["async", "async", "async"]);
    await executor.close();
  } finally {
    console.error = consoleError;
  }
  assert.deepEqual(saved, ["saves"], "close() waited for the handler's promise");
  assert.equal(reported.length, 2);
  assert.match(reported.find((r) => r.includes("throws")) ?? "", /handler threw/);
  assert.match(reported.find((r) => r.includes("rejects")) ?? "", /handler rejected/);
});
