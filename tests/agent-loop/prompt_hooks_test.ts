/**
 * Seed 003's prompt hooks: the manager's API, the removal table walked
 * message by message through the agent loop's flowchart (planning round,
 * three agent rounds with and without tools), persistence across requests,
 * and `scanPromptHooks` against hostile skill folders.
 */
import { deepStrictEqual as assertEquals, ok, rejects, throws } from "node:assert/strict";
import {
  AgentExecutor,
  type LLMRequest,
  type Message,
  type ModelAnswer,
  type PromptHookInfo,
  PromptHookManager,
  type PromptTiming,
  scanPromptHooks,
} from "../../packages/hookbox/deno.ts";
import { isHookboxError } from "../../packages/core/errors.ts";
import { tempTree } from "../_helpers.ts";
import { writeDemoSkill } from "./_skills.ts";

const info = (
  name: string,
  timing: PromptTiming,
  extra: Partial<PromptHookInfo> = {},
): PromptHookInfo => ({
  skill: "s",
  name,
  file: `${name}.md`,
  timing,
  role: "system",
  persistent: false,
  toolFilter: null,
  content: name.toUpperCase(),
  ...extra,
});

const texts = (messages: readonly Message[]) => messages.map((m) => String(m.content));

Deno.test("PromptHookManager.inject() appends every time (no de-duplication) and returns only persistent hooks", () => {
  const messages: Message[] = [{ role: "user", content: "Q" }];
  const manager = new PromptHookManager(messages, [
    info("a", "before_each_agent"),
    info("p", "before_each_agent", { persistent: true, role: "user" }),
  ]);
  assertEquals(manager.inject("before_each_agent"), [{ name: "p", role: "user", content: "P" }]);
  assertEquals(manager.inject("before_each_agent"), [{ name: "p", role: "user", content: "P" }]);
  assertEquals(texts(messages), ["Q", "A", "P", "A", "P"]);
  manager.remove("before_each_agent");
  assertEquals(texts(messages), ["Q", "P", "P"], "persistent messages are never removed");
  manager.remove("before_each_agent");
  assertEquals(texts(messages), ["Q", "P", "P"]);
});

Deno.test("PromptHookManager: tool_filter applies to after_tool_call only", () => {
  const messages: Message[] = [];
  const manager = new PromptHookManager(messages, [
    info("read-hint", "after_tool_call", { toolFilter: ["read_file"] }),
    info("any-tool", "after_tool_call"),
    info("plan", "before_planning", { toolFilter: ["read_file"] }),
  ]);
  manager.inject("after_tool_call", { toolName: "search" });
  assertEquals(texts(messages), ["ANY-TOOL"]);
  manager.inject("after_tool_call", { toolName: "read_file" });
  assertEquals(texts(messages), ["ANY-TOOL", "READ-HINT", "ANY-TOOL"]);
  manager.inject("before_planning");
  assertEquals(texts(messages).at(-1), "PLAN", "the filter is ignored for other timings");
});

Deno.test("PromptHookManager.removePrompt() removes by reference, not by text", () => {
  const messages: Message[] = [{ role: "system", content: "STEP" }];
  const manager = new PromptHookManager(messages, []);
  const ref = manager.injectPrompt("STEP");
  assertEquals(ref, { role: "system", content: "STEP" });
  manager.removePrompt(ref);
  ok(messages.length === 1 && messages[0] !== ref, "the caller's own identical message stays");
  manager.removePrompt(ref);
  assertEquals(messages.length, 1);
  assertEquals(manager.injectPrompt("hi", "user").role, "user");
});

Deno.test("PromptHookManager rejects an unknown timing with a TypeError naming it", () => {
  const manager = new PromptHookManager([], []);
  throws(() => manager.inject("before_lunch" as PromptTiming), /before_lunch/);
  throws(() => manager.remove("after_everything" as PromptTiming), TypeError);
});

/** A scripted model that records what it was sent. */
function scripted(answers: ModelAnswer[]) {
  const seen: { phase: string; messages: string[]; tools: string[] | null }[] = [];
  return {
    seen,
    model: {
      name: "scripted",
      call(request: LLMRequest, { phase }: { phase: string }) {
        seen.push({
          phase,
          messages: texts(request.messages),
          tools: request.tools?.map((t) => t.function.name) ?? null,
        });
        const answer = answers.shift();
        if (!answer) throw new Error("the script ran out");
        return answer;
      },
    },
  };
}

const tool = (name: string) => ({
  schema: { type: "function", function: { name, description: `tool ${name}` } },
  run: () => `${name}-result`,
});

const call = (id: string, name: string) => ({ id, name, arguments: {} });

async function demoHooks() {
  await using tree = await tempTree();
  await writeDemoSkill(`${tree.root}/skills`);
  return await scanPromptHooks(`${tree.root}/skills`, ["demo"]);
}

Deno.test("seed 003 flowchart: planning round and three agent rounds, message by message", async () => {
  const { seen, model } = scripted([
    { content: "plan", needTools: true },
    { content: "r1", toolCalls: [call("1", "A")] },
    { content: "r2", toolCalls: [call("2", "B")] },
    { content: "done" },
  ]);
  const agent = new AgentExecutor({
    model,
    tools: [tool("A"), tool("B"), tool("C")],
    promptHooks: await demoHooks(),
    planningPrompt: "PLAN",
    stepPrompt: "STEP",
  });
  const out = await agent.run(
    [{ role: "system", content: "SYS" }, { role: "user", content: "Q" }],
    {
      sessionId: "s",
    },
  );
  assertEquals(out.terminationReason, "completed");
  assertEquals(out.content, "done");
  // ① after_user_input, ② before_planning and the planning prompt: the planning round, no tools.
  assertEquals(seen[0], {
    phase: "planning",
    messages: ["SYS", "Q", "AUI", "BP", "PLAN"],
    tools: null,
  });
  // Round 1: BP and PLAN gone; ③ before_each_agent, ④ before_first_agent, the step prompt.
  assertEquals(seen[1], {
    phase: "agent",
    messages: ["SYS", "Q", "AUI", "plan", "BEA", "PERSIST", "BFA", "STEP"],
    tools: ["A", "B", "C"],
  });
  // Round 2: round 1's BEA removed (PERSIST stays), STEP removed, ⑤ after_tool_call for A visible.
  assertEquals(seen[2]?.messages, [
    "SYS",
    "Q",
    "AUI",
    "plan",
    "PERSIST",
    "BFA",
    "r1",
    "A-result",
    "ATC",
    "BEA",
    "PERSIST",
    "STEP",
  ]);
  // Round 3: round 2's BEA and round 1's ATC removed; ATC for B, BFA still there, PERSIST three times.
  assertEquals(seen[3]?.messages, [
    "SYS",
    "Q",
    "AUI",
    "plan",
    "PERSIST",
    "BFA",
    "r1",
    "A-result",
    "PERSIST",
    "r2",
    "B-result",
    "ATC",
    "BEA",
    "PERSIST",
    "STEP",
  ]);
  // After the loop: BFA and ATC removed, round 3's BEA left (removed only before a next round),
  // AUI left for the request's lifetime; STEP removed at the end of each step.
  assertEquals(texts(out.messages), [
    "SYS",
    "Q",
    "AUI",
    "plan",
    "PERSIST",
    "r1",
    "A-result",
    "PERSIST",
    "r2",
    "B-result",
    "BEA",
    "PERSIST",
    "done",
  ]);
  assertEquals(out.persistentPrompts, [
    { name: "remember", role: "user", content: "PERSIST" },
    { name: "remember", role: "user", content: "PERSIST" },
    { name: "remember", role: "user", content: "PERSIST" },
  ]);
  ok(!seen.some((s) => s.messages.includes("ATC-C")), "a tool_filter for C never fires for A or B");
});

Deno.test("seed 003 flowchart: no tools means one direct call with only after_user_input", async () => {
  const { seen, model } = scripted([{ content: "hello" }]);
  const agent = new AgentExecutor({
    model,
    promptHooks: await demoHooks(),
    planningPrompt: "PLAN",
    stepPrompt: "STEP",
  });
  const out = await agent.run([{ role: "user", content: "Q" }], { sessionId: "s" });
  assertEquals(seen, [{ phase: "direct", messages: ["Q", "AUI"], tools: null }]);
  assertEquals([out.content, out.persistentPrompts], ["hello", []]);
  const off = scripted([{ content: "hi" }]);
  await new AgentExecutor({ model: off.model, tools: [tool("A")], enableTools: false }).run(
    [{ role: "user", content: "Q" }],
    { sessionId: "s" },
  );
  assertEquals(off.seen[0]?.phase, "direct", "enableTools: false skips planning and the loop");
});

Deno.test("seed 003 flowchart: a planning round that needs no tool ends the request", async () => {
  const { seen, model } = scripted([{ content: "just an answer", needTools: false }]);
  const agent = new AgentExecutor({
    model,
    tools: [tool("A")],
    promptHooks: await demoHooks(),
    planningPrompt: "PLAN",
  });
  const out = await agent.run([{ role: "user", content: "Q" }], { sessionId: "s" });
  assertEquals(seen.length, 1);
  assertEquals(out.content, "just an answer");
  assertEquals(texts(out.messages), ["Q", "AUI", "just an answer"], "BP and PLAN were removed");
});

Deno.test("seed 003: persistent hooks come back with the client's history and are injected again", async () => {
  const hooks = await demoHooks();
  const request = async (history: Message[], enabled: PromptHookInfo[]) => {
    const { seen, model } = scripted([{ content: "ok" }]);
    const agent = new AgentExecutor({ model, tools: [tool("A")], promptHooks: enabled });
    const out = await agent.run(history, { sessionId: "s" });
    return { seen: seen[0]!.messages, out };
  };
  const first = await request([{ role: "user", content: "Q1" }], hooks);
  // The client keeps the persistent hook messages it was handed, then sends them back.
  const history: Message[] = [
    { role: "user", content: "Q1" },
    ...first.out.persistentPrompts.map(({ role, content }) => ({ role, content, _hook: true })),
    { role: "assistant", content: "ok" },
    { role: "user", content: "Q2" },
  ];
  const second = await request(history, hooks);
  assertEquals(second.seen.filter((t) => t === "PERSIST").length, 2, "history's copy + a new one");
  const third = await request([...history, { role: "user", content: "Q3" }], []);
  assertEquals(
    third.seen,
    ["Q1", "PERSIST", "ok", "Q2", "Q3"],
    "skill off: the kept copy is an ordinary message",
  );
});

Deno.test("scanPromptHooks() reads enabled skills only, in order, and skips skills without hooks", async () => {
  await using tree = await tempTree();
  const skills = `${tree.root}/skills`;
  await writeDemoSkill(skills, "demo");
  await writeDemoSkill(skills, "other");
  await tree.dir("skills/plain");
  const hooks = await scanPromptHooks(skills, ["plain", "demo", "missing"]);
  assertEquals(hooks.length, 7);
  assertEquals(hooks[0], {
    skill: "demo",
    name: "aui",
    file: "aui.md",
    timing: "after_user_input",
    role: "system",
    persistent: false,
    toolFilter: null,
    content: "AUI",
  });
  assertEquals(hooks[5]?.toolFilter, ["A", "B"]);
  ok(hooks.every((h) => h.skill === "demo"));
});

async function rejectsCode(promise: Promise<unknown>, code: string, field?: string) {
  await rejects(promise, (error) => {
    ok(isHookboxError(error), String(error));
    assertEquals(error.code, code);
    if (field !== undefined) assertEquals(error.field, field);
    return true;
  });
}

Deno.test("scanPromptHooks() refuses hostile skill folders with a code, path and field", async (t) => {
  await using tree = await tempTree();
  const skills = `${tree.root}/skills`;
  const write = async (skill: string, config: unknown, files: Record<string, string> = {}) => {
    await Deno.mkdir(`${skills}/${skill}/hooks`, { recursive: true });
    const text = typeof config === "string" ? config : JSON.stringify(config);
    await Deno.writeTextFile(`${skills}/${skill}/hooks/hooks.json`, text);
    for (const [name, body] of Object.entries(files)) {
      await Deno.writeTextFile(`${skills}/${skill}/hooks/${name}`, body);
    }
  };
  const hook = {
    name: "h",
    file: "h.md",
    timing: "after_user_input",
    role: "system",
    persistent: false,
  };
  await t.step("a file outside hooks/ by path", async () => {
    await write("escape", { hooks: [{ ...hook, file: "../../../etc/passwd.md" }] });
    await rejectsCode(scanPromptHooks(skills, ["escape"]), "PROMPT_HOOK_INVALID", "hooks.0.file");
  });
  await t.step("a file outside hooks/ by symbolic link", async () => {
    await Deno.writeTextFile(`${tree.root}/secret.md`, "secret");
    await write("link", { hooks: [hook] });
    await Deno.symlink(`${tree.root}/secret.md`, `${skills}/link/hooks/h.md`);
    await rejectsCode(scanPromptHooks(skills, ["link"]), "HOOK_PATH_OUTSIDE");
  });
  await t.step("a skill name that is a path", async () => {
    await rejectsCode(scanPromptHooks(skills, ["../skills/link"]), "PROMPT_HOOK_INVALID", "skill");
    await rejectsCode(scanPromptHooks(skills, [".."]), "PROMPT_HOOK_INVALID");
  });
  await t.step("an oversized hooks.json or prompt file", async () => {
    await write("big", " ".repeat(70 * 1024));
    await rejectsCode(scanPromptHooks(skills, ["big"]), "HOOK_FILE_TOO_LARGE");
    await write("bigmd", { hooks: [hook] }, { "h.md": "x".repeat(70 * 1024) });
    await rejectsCode(scanPromptHooks(skills, ["bigmd"]), "HOOK_FILE_TOO_LARGE");
  });
  await t.step("unknown fields, bad timings and roles, duplicates, too many hooks", async () => {
    await write("typo", { hooks: [{ ...hook, persistant: true }] }, { "h.md": "x" });
    await rejectsCode(scanPromptHooks(skills, ["typo"]), "PROMPT_HOOK_INVALID");
    await write("when", { hooks: [{ ...hook, timing: "before_lunch" }] }, { "h.md": "x" });
    await rejectsCode(scanPromptHooks(skills, ["when"]), "PROMPT_HOOK_INVALID", "hooks.0.timing");
    await write("who", { hooks: [{ ...hook, role: "assistant" }] }, { "h.md": "x" });
    await rejectsCode(scanPromptHooks(skills, ["who"]), "PROMPT_HOOK_INVALID", "hooks.0.role");
    await write("twice", { hooks: [hook, hook] }, { "h.md": "x" });
    await rejectsCode(scanPromptHooks(skills, ["twice"]), "PROMPT_HOOK_INVALID", "hooks.1.name");
    const many = Array.from({ length: 65 }, (_, i) => ({ ...hook, name: `h${i}` }));
    await write("many", { hooks: many }, { "h.md": "x" });
    await rejectsCode(scanPromptHooks(skills, ["many"]), "PROMPT_HOOK_INVALID", "hooks");
  });
  await t.step("not JSON, or a prompt file that is missing", async () => {
    await write("garbage", "{hooks:");
    await rejectsCode(scanPromptHooks(skills, ["garbage"]), "PROMPT_HOOK_INVALID");
    await write("nofile", { hooks: [hook] });
    await rejectsCode(scanPromptHooks(skills, ["nofile"]), "PROMPT_HOOK_INVALID", "hooks.0.file");
  });
});
