/**
 * Worker mode runs a tenant's synchronous WebAssembly chain in one worker
 * message per event (several events of one tenant may share a message): the
 * answers are those of the foreground dispatcher, a stalled chain is ended by
 * the worker's kill timer with every hook reporting it, and one tenant's
 * batched chains never carry another tenant's.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { dispatchEvent } from "../../packages/core/dispatch/dispatch.ts";
import type { DispatchResult } from "../../packages/core/dispatch/result.ts";
import type { HookDefinition } from "../../packages/core/hook/types.ts";
import { DEFAULT_POLICY } from "../../packages/core/policy.ts";
import type { Runtime } from "../../packages/core/runtime/types.ts";
import { WorkerRuntime } from "../../packages/runtime-wasm/worker/_worker_runtime.ts";
import { type HookEvent, parseEvent } from "../../packages/core/schema/event.ts";
import { parseEventText } from "../../packages/core/schema/event_text.ts";
import { agentEventOfText } from "../../packages/agents/event_text.ts";
import { corpus, corpusRuntime, shellEvent, wasmHook } from "./_corpus.ts";
import { createPromptRuntime } from "../../packages/core/runtime/prompt.ts";
import { fakeHook } from "../_helpers.ts";

const STALL_ENTRY = new URL("./_stall_worker.ts", import.meta.url);
const TEXT_ONLY_ENTRY = new URL("./_text_only_worker.ts", import.meta.url);

function workerRuntime(messages: string[], entry?: URL, workers = 1): WorkerRuntime {
  return new WorkerRuntime({
    loadAllowanceMs: 20_000,
    loadBytes: (hook) =>
      corpus(hook.entry.runtime === "wasm" ? hook.entry.path.replace(/^.*\/|\.wasm$/g, "") : ""),
    workers,
    ...(entry ? { entry } : {}),
    onDispatch: (type) => messages.push(type),
  });
}

function dispatch(runtime: Runtime, hooks: HookDefinition[], command: string, tenantId = "t1") {
  return dispatchEvent(hooks, parseEvent(shellEvent(command)), {
    runtimes: { wasm: runtime },
    policy: { ...DEFAULT_POLICY },
    tenantId,
    env: {},
  });
}

/**
 * Waits until a worker has loaded `hooks` and runs them: on a loaded machine a new worker's start
 * alone can outlast 200 ms hook timeouts (a chain that waits past its hooks' time ends without
 * running, and no worker is killed for it), and loading the Extism SDK in it takes seconds.
 */
async function ready(runtime: Runtime, hooks: HookDefinition[]): Promise<void> {
  for (let tries = 0; tries < 50; tries++) {
    const result = await dispatch(runtime, hooks, "ls");
    if (result.hooks.every((h) => h.outcome !== "timeout")) return;
  }
  throw new Error("the new worker never ran the hooks within their timeouts");
}

/** The result without what varies from run to run. */
function stable(result: DispatchResult) {
  return { ...result, hooks: result.hooks.map(({ duration_ms: _, ...h }) => h) };
}

// A rewriter first, then a guard that sees the rewritten command, then a hook
// that blocks everything: chained modifications, the first block stops the chain.
const CHAIN = [
  wasmHook("rewrite_wasi", { priority: 40 }),
  wasmHook("guard_wasi", { priority: 30, isolation: "warm" }),
  wasmHook("block_wasi", { priority: 20 }),
  wasmHook("guard_extism", { priority: 10 }),
];

Deno.test("a chain with prompt hooks also runs on the worker, in one message, with the foreground's answer", async () => {
  const messages: string[] = [];
  const foreground = corpusRuntime();
  const worker = workerRuntime(messages);
  const prompt = fakeHook({ name: "remind", priority: 35, inject: { role: "system" } }, {
    entry: { runtime: "prompt" },
    body: "Run the tests before you commit.",
  });
  const hooks = [CHAIN[0]!, prompt, CHAIN[1]!];
  const run = (runtime: Runtime) =>
    dispatchEvent(hooks, parseEvent(shellEvent("rm -rf /")), {
      runtimes: { wasm: runtime, prompt: createPromptRuntime() },
      policy: { ...DEFAULT_POLICY },
      tenantId: "t1",
      env: {},
    });
  try {
    const expected = await run(foreground);
    for (let i = 0; i < 2; i++) { // the second time the worker knows every hook already
      messages.length = 0;
      const got = await run(worker);
      assertEquals(stable(got), stable(expected));
      assertEquals(messages, ["chain"], "parsed where the chain runs, not on this thread");
    }
    assertEquals(expected.inject.map((i) => i.content), ["Run the tests before you commit."]);
    // One hook alone is a chain too: its output is parsed on the worker as well.
    messages.length = 0;
    const alone = await dispatch(worker, [CHAIN[1]!], "rm -rf /");
    assertEquals([alone.decision, messages], ["block", ["chain"]]);
  } finally {
    await foreground.close?.();
    await worker.close();
  }
});

Deno.test("worker mode runs a wasm chain in one message per event, with the foreground's answer", async () => {
  const messages: string[] = [];
  const foreground = corpusRuntime();
  const worker = workerRuntime(messages);
  try {
    for (const command of ["rm -rf /", "ls"]) {
      for (const hooks of [CHAIN, CHAIN.slice(1), [CHAIN[1]!, CHAIN[3]!]]) {
        const expected = await dispatch(foreground, hooks, command);
        messages.length = 0;
        const got = await dispatch(worker, hooks, command);
        assertEquals(stable(got), stable(expected), `${command}: ${hooks.map((h) => h.name)}`);
        assertEquals(messages, ["chain"]);
      }
    }
    // The rewriter's command reached the guard: allowed; without it, the guard blocks.
    const rewritten = await dispatch(worker, [CHAIN[0]!, CHAIN[1]!], "rm -rf /");
    assertEquals([rewritten.decision, rewritten.modified_input], ["allow", { command: "ls -la" }]);
    const guarded = await dispatch(worker, [CHAIN[1]!, CHAIN[3]!], "rm -rf /");
    assertEquals([guarded.decision, guarded.blocked_by, guarded.hooks.length], [
      "block",
      "guard-wasi",
      1,
    ]);
  } finally {
    await foreground.close?.();
    await worker.close();
  }
});

Deno.test("an event parsed from request text (or made of an agent's payload) crosses to the worker as that text, with the object's answer", async () => {
  const messages: string[] = [];
  const foreground = corpusRuntime();
  // This worker refuses chains whose event comes as an object.
  const worker = workerRuntime(messages, TEXT_ONLY_ENTRY);
  let agent = false;
  const fromText = (command: string) => {
    if (agent) {
      // Claude Code's payload, made into an event by its adapter (here and again in the worker).
      const text = JSON.stringify({
        session_id: "s1",
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: { command },
      });
      const made = agentEventOfText({
        text,
        tenantId: "t1",
        agent: { name: "claude-code", at: "2026-01-01T00:00:00.000Z" },
      });
      if (!made.parsed?.ok) throw new Error("the payload did not make an event");
      return made.parsed.event;
    }
    const text = JSON.stringify({ ...shellEvent(command), tenant_id: "someone-else", extra: [1] });
    const parsed = parseEventText({ text, tenantId: "t1" });
    if (!parsed.ok) throw parsed.error;
    return parsed.event;
  };
  const run = (runtime: Runtime, event: HookEvent, hooks = CHAIN) =>
    dispatchEvent(hooks, event, {
      runtimes: { wasm: runtime },
      policy: { ...DEFAULT_POLICY },
      tenantId: "t1",
      env: {},
    });
  try {
    for (agent of [false, true]) {
      for (const command of ["rm -rf /", "ls"]) {
        for (const hooks of [CHAIN, [CHAIN[0]!, CHAIN[1]!], [CHAIN[1]!, CHAIN[3]!]]) {
          const expected = await run(foreground, fromText(command), hooks);
          messages.length = 0;
          const got = await run(worker, fromText(command), hooks);
          const what = `${agent ? "agent " : ""}${command}: ${hooks.map((h) => h.name)}`;
          assertEquals(stable(got), stable(expected), what);
          assertEquals(messages, ["chain"]);
        }
      }
    }
    // The same event as an object (made here, not parsed from text) is sent whole: refused.
    const whole = await run(worker, parseEvent(shellEvent("ls")), [CHAIN[1]!]);
    assertEquals(whole.hooks.map((h) => h.code), ["WORKER_FAILED"]);
  } finally {
    await foreground.close?.();
    await worker.close();
  }
});

Deno.test("worker mode ends a stalled chain at its deadline: every hook reports the timeout, on_error applies", async () => {
  const messages: string[] = [];
  const worker = workerRuntime(messages, STALL_ENTRY);
  const open = [
    wasmHook("guard_wasi", { timeout: 200 }),
    wasmHook("rewrite_wasi", { timeout: 200 }),
  ];
  const closed = [open[0]!, wasmHook("block_extism", { timeout: 200, on_error: "closed" })];
  try {
    // Loaded first, so the kill timer is the hooks' timeouts, not the load allowance.
    await ready(worker, [...open, closed[1]!]);
    const started = performance.now();
    const stalled = await dispatch(worker, open, "echo STALL");
    ok(performance.now() - started < 5_000);
    assertEquals(stalled.decision, "allow");
    assertEquals(stalled.hooks.map((h) => [h.name, h.outcome, h.code]), [
      ["guard-wasi", "timeout", "TIMEOUT"],
      ["rewrite-wasi", "timeout", "TIMEOUT"],
    ]);
    await ready(worker, closed);
    const blocked = await dispatch(worker, closed, "echo STALL");
    assertEquals([blocked.decision, blocked.blocked_by], ["block", "block-extism"]);
    // The next event is served by a fresh worker.
    await ready(worker, open);
    assertEquals((await dispatch(worker, open, "rm -rf /")).decision, "block");
    assertEquals(worker.workersStarted, 3);
  } finally {
    await worker.close();
  }
});

Deno.test("a stalled chain's prompt hooks still answer (the chain's failure is the WebAssembly hooks')", async () => {
  const worker = workerRuntime([], STALL_ENTRY);
  const prompt = fakeHook({ name: "remind", priority: 1, inject: { role: "system" } }, {
    entry: { runtime: "prompt" },
    body: "Be careful.",
  });
  const hooks = [wasmHook("guard_wasi", { timeout: 200 }), prompt];
  const run = (command: string) =>
    dispatchEvent(hooks, parseEvent(shellEvent(command)), {
      runtimes: { wasm: worker, prompt: createPromptRuntime() },
      policy: { ...DEFAULT_POLICY },
      tenantId: "t1",
      env: {},
    });
  try {
    await run("ls"); // loaded first: the kill timer is the hooks' timeouts
    const stalled = await run("echo STALL");
    assertEquals(stalled.hooks.map((h) => [h.name, h.code]), [
      ["guard-wasi", "TIMEOUT"],
      ["remind", null],
    ]);
    assertEquals(stalled.inject.map((i) => i.content), ["Be careful."]);
  } finally {
    await worker.close();
  }
});

Deno.test("worker mode ends a chain that waits for a busy worker past its hooks' time, without running it", async () => {
  const messages: string[] = [];
  const worker = workerRuntime(messages, STALL_ENTRY);
  const slow = [
    wasmHook("guard_wasi", { timeout: 1_800 }),
    wasmHook("rewrite_wasi", { timeout: 1_800 }),
  ];
  const quick = [
    wasmHook("block_wasi", { timeout: 100 }),
    wasmHook("guard_extism", { timeout: 100, on_error: "closed" }),
  ];
  try {
    await dispatch(worker, [...slow, ...quick], "ls"); // loaded: kill timers are the timeouts
    messages.length = 0;
    const order: string[] = [];
    const stalled = dispatch(worker, slow, "echo STALL").then((r) => (order.push("stalled"), r));
    // Another tenant's chain, so it is not batched into the stalled message.
    const waiting = dispatch(worker, quick, "ls", "t2").then((r) => (order.push("waiting"), r));
    const waited = await waiting;
    assertEquals(waited.hooks.map((h) => [h.name, h.outcome, h.code]), [
      ["block-wasi", "timeout", "TIMEOUT"],
      ["guard-extism", "timeout", "TIMEOUT"],
    ]);
    assertEquals(
      [waited.decision, waited.blocked_by],
      ["block", "guard-extism"],
      "on_error applies",
    );
    assertEquals(order, ["waiting"], "it gave up while the worker was still busy");
    assertEquals((await stalled).hooks[0]?.code, "TIMEOUT");
    assertEquals(messages, ["chain"], `the waiting chain never reached a worker: ${messages}`);
  } finally {
    await worker.close();
  }
});

Deno.test("worker mode batches one tenant's waiting chains into one message, never another tenant's", async () => {
  const messages: string[] = [];
  const worker = workerRuntime(messages);
  const probe = wasmHook("sandbox_probe", { env: ["HOOKBOX_TENANT_ID"] });
  const hooks = [probe, wasmHook("guard_wasi")];
  const spin = [wasmHook("loop_forever", { timeout: 300, limits: { fuel: 1e12 } }), hooks[1]!];
  try {
    await dispatch(worker, [...hooks, spin[0]!], "ls", "z");
    messages.length = 0;
    // Tenant z's chain holds the only worker while a's and b's queue, interleaved.
    const z = dispatch(worker, spin, "ls", "z");
    while (messages.length === 0) await new Promise((r) => setTimeout(r, 1));
    const queued = ["a", "b", "a", "b", "a", "b"].map((t) =>
      dispatch(worker, hooks, "ls", t).then((r) => ({ tenant: t, r }))
    );
    const named = (r: DispatchResult, name: string) => r.hooks.find((h) => h.name === name)!;
    assertEquals(named(await z, "loop-forever").code, "TIMEOUT");
    for (const { tenant, r } of await Promise.all(queued)) {
      // Each chain ran as its own tenant (the probe prints the tenant it was given).
      const { stdout } = named(r, "sandbox-probe");
      ok(stdout.includes(`HOOKBOX_TENANT_ID=${tenant}\0`), stdout);
    }
    // z's chain, then one message for a's three chains and one for b's.
    assertEquals(messages, ["chain", "chain", "chain"]);
  } finally {
    await worker.close();
  }
});
