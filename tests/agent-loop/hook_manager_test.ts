/**
 * `HookManager`: order by numeric priority (lower first), vetoes, error
 * isolation, and seed 001's context objects.
 */
import { deepStrictEqual as assertEquals, ok, throws } from "node:assert/strict";
import { allowResult } from "../../packages/core/dispatch/result.ts";
import {
  type AgentHook,
  type EventType,
  type Executor,
  HookContext,
  type HookLevel,
  HookManager,
  LLMRequest,
  type RunOutput,
  sandboxHooks,
  ToolCallInfo,
} from "../../packages/hookbox/deno.ts";

const ctx = () =>
  new HookContext({
    runId: "r",
    sessionId: "s",
    messages: [{ role: "user", content: "hi" }],
    tools: ["a", "b"].map((name) => ({ type: "function", function: { name } })),
  });
const call = () => new ToolCallInfo("1", "bash", { command: "ls" });

Deno.test("HookManager runs lower priorities first, ties in registration order", async () => {
  const order: string[] = [];
  const hook = (name: string, priority?: number): AgentHook => ({
    name,
    ...(priority === undefined ? {} : { priority }),
    onToolStart: () => void order.push(name),
  });
  const manager = new HookManager([hook("logging", 500), hook("default"), hook("security", 10)]);
  manager.register(hook("default-2"));
  manager.register(hook("first", 1000), 0);
  await manager.onToolStart(ctx(), call());
  assertEquals(order, ["first", "security", "default", "default-2", "logging"]);
  throws(() => manager.register(hook("nan"), NaN), TypeError);
});

Deno.test("HookManager: the first veto stops later hooks; seed 002's false blocks too", async () => {
  const ran: string[] = [];
  const manager = new HookManager([
    { name: "a", onToolStart: () => void ran.push("a") },
    { name: "deny", onToolStart: () => false },
    { name: "c", onToolStart: () => void ran.push("c") },
  ]);
  assertEquals(await manager.onToolStart(ctx(), call()), {
    blocked: true,
    reason: "blocked by deny",
  });
  assertEquals(ran, ["a"]);
  const outcome = new HookManager([{ onLlmStart: () => ({ blocked: true, reason: "budget" }) }]);
  const request = new LLMRequest([], null);
  assertEquals(await outcome.onLlmStart(ctx(), request), { blocked: true, reason: "budget" });
  assertEquals(await new HookManager().onStop(ctx(), { lastMessage: "", stopCount: 0 }), {
    blocked: false,
    reason: "",
  });
});

Deno.test("HookManager isolates errors: open hooks are skipped, closed hooks veto", async () => {
  const failures: string[] = [];
  const onHookError = (hook: string, callback: string) => void failures.push(`${hook}.${callback}`);
  const ran: string[] = [];
  const boom = () => {
    throw new Error("boom");
  };
  const open = new HookManager([
    { name: "broken", onToolStart: boom, onSessionEnd: boom, onError: boom },
    { name: "after", onToolStart: () => void ran.push("after") },
  ], { onHookError });
  assertEquals((await open.onToolStart(ctx(), call())).blocked, false);
  await open.onSessionEnd(ctx(), "exit");
  await open.onError(ctx(), new Error("x"), { phase: "run" });
  assertEquals(ran, ["after"]);
  assertEquals(failures, ["broken.onToolStart", "broken.onSessionEnd", "broken.onError"]);
  const closed = new HookManager([{ name: "strict", errorMode: "closed", onToolStart: boom }], {
    onHookError,
  });
  assertEquals(await closed.onToolStart(ctx(), call()), {
    blocked: true,
    reason: "hook strict failed: boom",
  });
});

Deno.test("HookManager.onRunEnd() threads the output through every hook; a failing one changes nothing", async () => {
  const output: RunOutput = {
    content: "answer",
    terminationReason: "completed",
    reason: null,
    steps: [],
    messages: [],
    persistentPrompts: [],
  };
  const manager = new HookManager([
    { onRunEnd: (_ctx, o) => ({ ...o, content: `${o.content}!` }) },
    {
      onRunEnd: () => {
        throw new Error("x");
      },
    },
    { onRunEnd: (_ctx, o) => ({ ...o, tagged: true }) },
    { onRunEnd: () => undefined },
  ], { onHookError: () => {} });
  const out = await manager.onRunEnd(ctx(), output);
  assertEquals([out.content, out.tagged], ["answer!", true]);
});

Deno.test("LLMRequest is a copy: temporary changes never reach HookContext.messages", () => {
  const c = ctx();
  const request = new LLMRequest(c.messages, c.getActiveToolSchemas());
  request.injectMessage("note", "system");
  request.injectSystemContext("extra");
  request.messages[request.messages.length - 1]!.content = "changed";
  assertEquals(c.messages, [{ role: "user", content: "hi" }]);
  assertEquals(request.messages.map((m) => [m.role, m.content]), [
    ["system", "note\n\nextra"],
    ["user", "changed"],
  ]);
  request.injectMessage("at the end", "user", { beforeLastUser: false });
  assertEquals(request.messages.at(-1)?.content, "at the end");
});

Deno.test("HookContext: system prompt helpers, steps and tool control", () => {
  const c = ctx();
  c.appendToSystemPrompt("B");
  c.prependToSystemPrompt("A");
  c.appendToSystemPrompt("C", " ");
  assertEquals(c.getSystemMessage()?.content, "A\n\nB C");
  c.setSystemPrompt("S");
  assertEquals(c.getMessagesByRole("system").length, 1);
  assertEquals(c.getLastUserMessage()?.content, "hi");
  c.steps.push({ type: "assistant", content: "x", toolCalls: [] });
  c.steps.push({ type: "tool", name: "a", content: "r1", toolCalls: [] });
  c.steps.push({ type: "tool", name: "b", content: "", toolCalls: [] });
  assertEquals(c.getLastAssistantStep()?.content, "x");
  assertEquals(c.getLastToolStep()?.name, "b");
  assertEquals(c.getToolResults(), ["r1"]);
  assertEquals(c.getToolSteps("b").length, 1);
  c.disableTool("a");
  assertEquals(c.getActiveToolSchemas()?.map((t) => t.function.name), ["b"]);
  c.disableAllTools();
  assertEquals(c.getActiveToolSchemas(), []);
  c.enableTool("b");
  ok(c.isToolDisabled("a") && !c.isToolDisabled("b"));
  c.enableAllTools();
  assertEquals(c.getActiveToolSchemas()?.length, 2);
  assertEquals(
    new HookContext({ runId: "r", sessionId: "s", messages: [] }).getActiveToolSchemas(),
    null,
  );
});

Deno.test("a sandboxed hook cannot enable a tool in-process code or a higher level disabled", async () => {
  // A fake executor answering every event with the given hooks' control output.
  const answering = (hooks: { level: HookLevel; control: unknown }[]): Executor => ({
    dispatch: (input) =>
      Promise.resolve({
        ...allowResult((input as { event_type: EventType }).event_type),
        disable_tools: hooks.flatMap((h) =>
          (h.control as { disable_tools?: string[] }).disable_tools ?? []
        ),
        enable_tools: hooks.flatMap((h) =>
          (h.control as { enable_tools?: string[] }).enable_tools ?? []
        ),
        hooks: hooks.map((h, i) => ({
          name: `h${i}`,
          level: h.level,
          runtime: "wasm",
          outcome: "ok",
          exit_code: 0,
          duration_ms: 0,
          stdout: JSON.stringify(h.control),
          stderr: "",
          code: null,
          detail: null,
          fuel: 0,
        })),
      }),
    hooks: () => Promise.resolve([]),
    problems: () => Promise.resolve([]),
    close: () => Promise.resolve(),
  });
  const schema = (name: string) => ({ type: "function" as const, function: { name } });
  const ctx = new HookContext({
    runId: "r",
    sessionId: "s",
    messages: [{ role: "user", content: "hi" }],
    tools: [schema("Bash"), schema("Write"), schema("Read")],
  });
  ctx.disableTool("Bash"); // the operator's in-process hook
  await sandboxHooks(answering([{ level: "platform", control: { disable_tools: ["Write"] } }]))
    .onRunStart!(ctx);
  await sandboxHooks(answering([{ level: "project", control: { disable_tools: ["Read"] } }]))
    .onRunStart!(ctx);
  ok(ctx.isToolDisabled("Read"));
  await sandboxHooks(answering([
    { level: "user", control: {} },
    { level: "project", control: { enable_tools: ["Bash", "Write", "Read"] } },
  ])).onRunStart!(ctx);
  ok(ctx.isToolDisabled("Bash"), "in-process code's disable stands");
  ok(ctx.isToolDisabled("Write"), "a platform hook's disable stands against a project hook");
  ok(!ctx.isToolDisabled("Read"), "a project hook re-enables what its own level disabled");
  await sandboxHooks(answering([{ level: "platform", control: { enable_tools: ["Write"] } }]))
    .onRunStart!(ctx);
  ok(!ctx.isToolDisabled("Write"), "the level that disabled it can enable it");
  ctx.enableTool("Bash");
  ok(!ctx.isToolDisabled("Bash"), "in-process code can enable anything");
});
