/**
 * Sandboxed hook folders joined to the in-process agent API: every callback
 * fires its §1 event, and the result is applied as the seeds describe.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import {
  AgentExecutor,
  type AgentTool,
  createExecutor,
  type DispatchResult,
  type EventType,
  HookManager,
  type LLMRequest,
  type Message,
  type ModelAnswer,
  sandboxHooks,
} from "../../packages/hookbox/deno.ts";
import { writeSandboxHooks } from "./_sandbox_hooks.ts";
import { hookMd } from "../_helpers.ts";

const dir = await Deno.makeTempDir({ prefix: "hookbox_agent_" });
await writeSandboxHooks(dir);
const executor = createExecutor({ projectDir: dir, userDir: null });
globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));

/** Every dispatch the sandbox made, in order. */
function recorder() {
  const fired: { type: EventType; result: DispatchResult }[] = [];
  const hook = sandboxHooks(executor, { onResult: (type, result) => fired.push({ type, result }) });
  return { fired, hook };
}

function scripted(answers: (ModelAnswer | Error)[]) {
  const requests: LLMRequest[] = [];
  return {
    requests,
    model: {
      name: "scripted",
      call(request: LLMRequest) {
        requests.push(request);
        const answer = answers.shift();
        if (answer instanceof Error) throw answer;
        if (!answer) throw new Error("the script ran out");
        return answer;
      },
    },
  };
}

const contents = (messages: readonly Message[]) => messages.map((m) => String(m.content));

function tools(ran: Record<string, unknown>): AgentTool[] {
  const tool = (name: string, run: AgentTool["run"]): AgentTool => ({
    schema: { type: "function", function: { name } },
    run,
  });
  return [
    tool("bash", (args) => (ran.bash = args, "ran")),
    tool("search", (args) => (ran.search = args, args)),
    tool("read", () => "the key is sk-abc123"),
    tool("flaky", () => {
      throw new Error("disk on fire");
    }),
    tool("danger", () => "boom"),
    tool("delegate", (args, { subagent }) => subagent("helper", String(args.task))),
  ];
}

const USER: Message[] = [{ role: "system", content: "SYS" }, { role: "user", content: "fix it" }];

Deno.test("sandboxed hooks block, rewrite, replace results, inject, disable tools and gate the stop", async () => {
  const ran: Record<string, unknown> = {};
  const { fired, hook } = recorder();
  const { requests, model } = scripted([
    {
      content: "working",
      toolCalls: [
        { id: "1", name: "bash", arguments: { command: "rm -rf /" } },
        { id: "2", name: "search", arguments: { q: "x" } },
        { id: "3", name: "read", arguments: {} },
        { id: "4", name: "flaky", arguments: {} },
      ],
    },
    { content: "draft answer" },
    { content: "all tests pass" },
  ]);
  const agent = new AgentExecutor({ model, tools: tools(ran), hooks: [hook] });
  const out = await agent.run(USER, { sessionId: "s1" });
  assertEquals([out.terminationReason, out.content], ["completed", "all tests pass"]);
  // Blocked before it ran; the model is told why.
  assertEquals(ran.bash, undefined);
  const toolMessages = out.messages.filter((m) => m.role === "tool").map((m) => m.content);
  assertEquals(toolMessages, [
    "Blocked: rm -rf is not allowed",
    JSON.stringify({ q: "x", limit: 5 }),
    "the key is [REDACTED]",
    "Error: disk on fire",
  ]);
  assertEquals(ran.search, { q: "x", limit: 5 }, "the tool got the rewritten arguments");
  // The store is shared across events; the blocked call never reached count-calls (it runs later).
  assertEquals(out.steps.length, 7);
  const [first, second, third] = requests.map((r) => contents(r.messages));
  // Temporary injection: this request only; persistent: in messages from now on.
  ok(first!.includes("temporary note") && first!.includes("kept note"));
  ok(!second!.includes("temporary note") && second!.filter((c) => c === "kept note").length === 1);
  ok(!contents(out.messages).includes("temporary note"));
  ok(contents(out.messages).includes("kept note"));
  // The failure hook's injection (not persistent, fired between calls) reaches the next request only.
  ok(second!.includes("Tool flaky failed: disk on fire"));
  ok(!third!.includes("Tool flaky failed: disk on fire"));
  // Disabled for this and later calls.
  for (const r of requests) ok(!r.tools!.some((t) => t.function.name === "danger"));
  // The model's answer was replaced; the stop gate sent the agent back once with its reason.
  ok(third!.includes("final answer"), third!.join("|"));
  ok(third!.includes("run the tests first (0)"));
  const types = fired.map((f) => f.type);
  assertEquals(types.filter((t) => t === "pre-agent-turn-stop").length, 2);
  assertEquals(types.at(-1), "post-agent-turn");
  assertEquals(types.at(-2), "post-agent-turn-stop");
  ok(types.includes("post-tool-call-failure"));
  const lastToolEvent = fired.findLast((f) => f.type === "pre-tool-call");
  assertEquals(lastToolEvent?.result.store, { calls: 3 });
});

Deno.test("the stop gate's loop budget ends the run after maxStopContinues", async () => {
  const { fired, hook } = recorder();
  const { requests, model } = scripted([{ content: "a" }, { content: "b" }, { content: "c" }]);
  const agent = new AgentExecutor({ model, hooks: [hook], maxStopContinues: 2 });
  const out = await agent.run(USER, { sessionId: "s2" });
  assertEquals(requests.length, 3);
  assertEquals([out.terminationReason, out.content, out.reason], [
    "stop_budget",
    "c",
    "run the tests first (2)",
  ]);
  assertEquals(fired.filter((f) => f.type === "post-agent-turn-stop").length, 1);
});

Deno.test("in-process hooks run by priority (lower first) around the sandboxed chain", async () => {
  const ran: Record<string, unknown> = {};
  const { hook } = recorder();
  const order: string[] = [];
  const { model } = scripted([
    {
      content: "",
      toolCalls: [{ id: "1", name: "bash", arguments: { command: "rm -rf /tmp/x" } }],
    },
    { content: "tests pass" },
  ]);
  const agent = new AgentExecutor({
    model,
    tools: tools(ran),
    hooks: [
      hook,
      { name: "late", priority: 500, onToolStart: () => void order.push("late") },
      {
        name: "safer",
        priority: 50,
        onToolStart(_ctx, call) {
          order.push("safer");
          call.updateArgument("command", "ls /tmp/x");
        },
      },
    ],
  });
  await agent.run(USER, { sessionId: "s3" });
  assertEquals(order, ["safer", "late"]);
  assertEquals(ran.bash, { command: "ls /tmp/x" }, "rewritten before the sandboxed guard saw it");
});

Deno.test("subagents: a crashing on_error: closed hook refuses, a crashing open one is skipped", async () => {
  const ran: Record<string, unknown> = {};
  const { fired, hook } = recorder();
  const helper = new AgentExecutor({ model: { call: () => ({ content: "helped, tests pass" }) } });
  const { model } = scripted([
    {
      content: "",
      toolCalls: [
        { id: "1", name: "delegate", arguments: { task: "forbidden work" } },
        { id: "2", name: "delegate", arguments: { task: "ok work" } },
      ],
    },
    { content: "tests pass" },
  ]);
  const agent = new AgentExecutor({
    model,
    tools: tools(ran),
    hooks: [hook],
    subagents: { helper },
  });
  const out = await agent.run(USER, { sessionId: "s4" });
  const results = out.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
  ok(results[0]?.startsWith("Blocked: "), results[0]);
  assertEquals(results[1], "helped, tests pass");
  const post = fired.find((f) => f.type === "post-subagent")!;
  assertEquals(post.result.decision, "allow");
  assertEquals(post.result.hooks[0]?.outcome, "error");
  const pre = fired.find((f) => f.type === "pre-subagent")!;
  assertEquals([pre.result.decision, pre.result.hooks[0]?.outcome], ["block", "error"]);
});

Deno.test("a failing model call fires post-llm-call-failure and ends the run as an error", async () => {
  const { fired, hook } = recorder();
  const errors: string[] = [];
  const { model } = scripted([new Error("rate limited")]);
  const agent = new AgentExecutor({
    model,
    hooks: [hook, { onError: (_ctx, error, info) => void errors.push(`${info.phase}: ${error}`) }],
  });
  const out = await agent.run(USER, { sessionId: "s5" });
  assertEquals([out.terminationReason, out.reason], ["error", "model call failed: rate limited"]);
  assertEquals(errors, ["llm: Error: rate limited"]);
  const failure = fired.find((f) => f.type === "post-llm-call-failure");
  ok(failure, fired.map((f) => f.type).join());
  assertEquals(fired.at(-1)?.type, "post-agent-turn");
});

Deno.test("compaction fires pre/post-context-compact and folds old messages into a summary", async () => {
  const { fired, hook } = recorder();
  const { requests, model } = scripted([
    { content: "1", toolCalls: [{ id: "1", name: "search", arguments: { q: "a" } }] },
    { content: "2", toolCalls: [{ id: "2", name: "search", arguments: { q: "b" } }] },
    { content: "tests pass" },
  ]);
  const agent = new AgentExecutor({
    model,
    tools: tools({}),
    hooks: [hook],
    compact: { maxMessages: 4, keep: 2, summarize: (m) => `${m.length} messages about search` },
  });
  const out = await agent.run(USER, { sessionId: "s6" });
  assertEquals(out.content, "tests pass");
  const compacts = fired.filter((f) => f.type.includes("context-compact")).map((f) => f.type);
  assertEquals(compacts, [
    "pre-context-compact",
    "post-context-compact",
    "pre-context-compact",
    "post-context-compact",
  ]);
  const seen = contents(requests[2]!.messages);
  assertEquals(seen[0], "SYS");
  ok(seen[1]?.startsWith("[summary of "), seen.join("|"));
});

Deno.test("chunk events reach in-process hooks as notifications", async () => {
  const chunks: string[] = [];
  const agent = new AgentExecutor({
    model: {
      call: (r) =>
        r.messages.some((m) => m.role === "tool")
          ? { content: "done", chunks: ["do", "ne"] }
          : { content: "", toolCalls: [{ id: "1", name: "stream", arguments: {} }] },
    },
    tools: [{
      schema: { function: { name: "stream" } },
      run: async (_args, { emit }) => {
        await emit("10%");
        await emit("100%");
        return "streamed";
      },
    }],
    hooks: [{
      onLlmChunk: (_ctx, chunk) => void chunks.push(`llm:${chunk}`),
      onToolChunk: (_ctx, call, chunk) => void chunks.push(`${call.name}:${chunk}`),
    }],
  });
  await agent.run(USER, { sessionId: "s7" });
  assertEquals(chunks, ["stream:10%", "stream:100%", "llm:do", "llm:ne"]);
});

Deno.test("hostile sandboxed answers: a __proto__ store key is data, a bad message list is refused", async () => {
  const dir2 = await Deno.makeTempDir({ prefix: "hookbox_agent_hostile_" });
  try {
    const hook = async (name: string, trigger: string, out: string) => {
      await Deno.mkdir(`${dir2}/${name}/scripts`, { recursive: true });
      await Deno.writeTextFile(`${dir2}/${name}/HOOK.md`, hookMd({ name, trigger }));
      await Deno.writeTextFile(
        `${dir2}/${name}/scripts/run.js`,
        `console.log(${JSON.stringify(out)});`,
      );
    };
    await hook("poison", "pre-agent-turn", '{"store": {"__proto__": {"admin": true}, "seen": 1}}');
    await hook("garble", "pre-llm-call", '{"modified_input": [1, "two", null]}');
    const failures: string[] = [];
    const seen: unknown[] = [];
    const agent = new AgentExecutor({
      model: {
        call: (request) => {
          seen.push(request.messages.map((m) => m.role));
          return { content: "tests pass" };
        },
      },
      hooks: new HookManager(
        [sandboxHooks(createExecutor({ projectDir: dir2, userDir: null }))],
        { onHookError: (_hook, callback, error) => void failures.push(`${callback}: ${error}`) },
      ),
    });
    const stores: Record<string, unknown>[] = [];
    agent.hooks.register({ onRunEnd: (ctx) => void stores.push(ctx.store) });
    await agent.run(USER, { sessionId: "s8" });
    const store = stores[0]!;
    assertEquals(
      Object.getPrototypeOf(store),
      Object.prototype,
      "the store's prototype is untouched",
    );
    assertEquals((store as { admin?: unknown }).admin, undefined);
    assertEquals(store.seen, 1);
    assertEquals(seen, [["system", "user"]], "the model got the real messages");
    ok(
      failures.some((f) => f.startsWith("onLlmStart: TypeError: modified_input")),
      failures.join(),
    );
  } finally {
    await Deno.remove(dir2, { recursive: true });
  }
});
