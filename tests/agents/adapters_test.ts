/**
 * The agent adapters (SPEC §8), in-process with a real executor: each agent's
 * documented stdin JSON → §1 event → hooks → that agent's answer, for a deny,
 * an allow (no opinion), a rewritten input, added context, a stop gate that
 * makes the agent continue, and an event with no §1 counterpart.
 */
import { deepStrictEqual as assertEquals, match, ok, throws } from "node:assert/strict";
import {
  type AgentAnswer,
  agentAnswer,
  agentCall,
  type AgentName,
  MODEL_TEXT_MAX,
  passThrough,
  shapedLike,
} from "../../packages/agents/adapters.ts";
import { createExecutor } from "../../packages/hookbox/deno.ts";
import { blockedResult } from "../../packages/agents/unreadable.ts";
import { CONTEXT, GUARD_REASON, STOP_REASON, writeAgentHooks } from "./_agent_hooks.ts";

const dir = await Deno.makeTempDir({ prefix: "hookbox-agents-" });
await writeAgentHooks(`${dir}/hooks`);
const executor = createExecutor({
  platformDirs: [`${dir}/hooks`],
  userDir: null,
  projectDir: null,
});

async function run(agent: AgentName, input: unknown, event?: string): Promise<AgentAnswer> {
  const call = agentCall(agent, input, event);
  if (call.event === null) return passThrough(call);
  return agentAnswer(call, await executor.dispatch(call.event));
}
const json = (a: AgentAnswer) => JSON.parse(a.stdout);
const NO_OPINION: AgentAnswer = { exitCode: 0, stdout: "", stderr: "" };

// Documented payloads (docs/ADAPTERS.md; sources in the research notes).
const claude = (event: string, extra: Record<string, unknown>) => ({
  session_id: "abc123",
  transcript_path: "/home/user/.claude/projects/x/transcript.jsonl",
  cwd: dir,
  permission_mode: "default",
  hook_event_name: event,
  ...extra,
});
const bash = (command: string) => ({
  tool_name: "Bash",
  tool_input: { command, description: "Run it", timeout: 120000 },
  tool_use_id: "toolu_01",
});

Deno.test("claude-code: deny, no opinion, rewrite keeping sibling fields, context, stop gate", async () => {
  const deny = await run("claude-code", claude("PreToolUse", bash("rm -rf /")));
  assertEquals([deny.exitCode, json(deny)], [0, {
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason: GUARD_REASON,
    },
  }]);
  assertEquals(await run("claude-code", claude("PreToolUse", bash("npm test"))), NO_OPINION);
  const rewrite = await run("claude-code", claude("PreToolUse", bash("rewrite-me")));
  // updatedInput replaces Claude's whole input: the other fields are kept.
  assertEquals(json(rewrite), {
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      updatedInput: { command: "ls -la", description: "Run it", timeout: 120000 },
    },
  });
  ok(!("permissionDecision" in json(rewrite).hookSpecificOutput), "never approves");
  const context = await run("claude-code", claude("UserPromptSubmit", { prompt: "fix the bug" }));
  assertEquals(json(context), {
    hookSpecificOutput: { hookEventName: "UserPromptSubmit", additionalContext: CONTEXT },
  });
  const stop = await run(
    "claude-code",
    claude("Stop", { stop_hook_active: false, last_assistant_message: "Done." }),
  );
  assertEquals(json(stop), { decision: "block", reason: STOP_REASON });
  assertEquals(await run("claude-code", claude("Notification", { message: "hi" })), NO_OPINION);
});

Deno.test("codex: deny, Stop continue, JSON on an allowed Stop, a rewrite denied with the new input", async () => {
  const codex = (event: string, extra: Record<string, unknown>) =>
    claude(event, { turn_id: "t-1", model: "gpt-5", ...extra });
  const deny = await run(
    "codex",
    codex("PreToolUse", { ...bash("rm -rf /"), tool_input: { command: "rm -rf /" } }),
  );
  assertEquals(json(deny).hookSpecificOutput.permissionDecision, "deny");
  assertEquals(json(deny).hookSpecificOutput.permissionDecisionReason, GUARD_REASON);
  assertEquals(await run("codex", codex("PreToolUse", bash("ls"))), NO_OPINION);
  const rewrite = await run(
    "codex",
    codex("PreToolUse", { ...bash("rewrite-me"), tool_input: { command: "rewrite-me" } }),
  );
  assertEquals(json(rewrite).hookSpecificOutput.permissionDecision, "deny");
  ok(json(rewrite).hookSpecificOutput.permissionDecisionReason.includes('"ls -la"'));
  const stop = await run(
    "codex",
    codex("Stop", { stop_hook_active: false, last_assistant_message: "ok" }),
  );
  assertEquals(json(stop), { decision: "block", reason: STOP_REASON });
  // Codex requires JSON on exit 0 from Stop: an event it has that maps nowhere still answers {}.
  assertEquals(passThrough(agentCall("codex", codex("Stop", {}))).stdout, "{}");
  const context = await run("codex", codex("UserPromptSubmit", { prompt: "hi" }));
  assertEquals(json(context).hookSpecificOutput.additionalContext, CONTEXT);
});

Deno.test("gemini-cli: decisions in JSON (never by exit code), merged tool_input, AfterAgent retry", async () => {
  const gemini = (event: string, extra: Record<string, unknown>) => ({
    session_id: "g1",
    transcript_path: "/tmp/chat.json",
    cwd: dir,
    hook_event_name: event,
    timestamp: "2026-08-21T10:00:00.000Z",
    ...extra,
  });
  const tool = (command: string) => ({ tool_name: "run_shell_command", tool_input: { command } });
  const deny = await run("gemini-cli", gemini("BeforeTool", tool("rm -rf build /")));
  assertEquals([deny.exitCode, json(deny)], [0, { decision: "deny", reason: GUARD_REASON }]);
  assertEquals(await run("gemini-cli", gemini("BeforeTool", tool("ls"))), NO_OPINION);
  const rewrite = await run("gemini-cli", gemini("BeforeTool", tool("rewrite-me")));
  assertEquals(json(rewrite), { hookSpecificOutput: { tool_input: { command: "ls -la" } } });
  const context = await run("gemini-cli", gemini("SessionStart", { source: "startup" }));
  assertEquals(json(context), { hookSpecificOutput: { additionalContext: CONTEXT } });
  const retry = await run(
    "gemini-cli",
    gemini("AfterAgent", { prompt: "p", prompt_response: "done", stop_hook_active: false }),
  );
  assertEquals(json(retry), { decision: "deny", reason: STOP_REASON });
  assertEquals(
    await run("gemini-cli", gemini("BeforeToolSelection", { llm_request: {} })),
    NO_OPINION,
  );
});

Deno.test("cursor: permission deny, updated_input, followup_message on stop, shell events", async () => {
  const cursor = (event: string, extra: Record<string, unknown>) => ({
    conversation_id: "c1",
    generation_id: "g1",
    hook_event_name: event,
    cursor_version: "2.0",
    workspace_roots: [dir],
    user_email: null,
    transcript_path: null,
    ...extra,
  });
  const deny = await run(
    "cursor",
    cursor("beforeShellExecution", { command: "rm -rf /", cwd: dir }),
  );
  assertEquals(json(deny), {
    permission: "deny",
    user_message: GUARD_REASON,
    agent_message: GUARD_REASON,
  });
  const tool = await run(
    "cursor",
    cursor("preToolUse", {
      tool_name: "Shell",
      tool_input: { command: "rewrite-me" },
      tool_use_id: "t",
    }),
  );
  assertEquals(json(tool), { updated_input: { command: "ls -la" } });
  assertEquals(
    await run(
      "cursor",
      cursor("preToolUse", { tool_name: "Shell", tool_input: { command: "ls" } }),
    ),
    NO_OPINION,
  );
  const stop = await run("cursor", cursor("stop", { status: "completed", loop_count: 0 }));
  assertEquals(json(stop), { followup_message: STOP_REASON });
  const prompt = await run(
    "cursor",
    cursor("beforeSubmitPrompt", { prompt: "hi", attachments: [] }),
  );
  assertEquals(prompt, NO_OPINION, "Cursor has no context field on prompts");
  assertEquals(
    await run("cursor", cursor("afterFileEdit", { file_path: "/x", edits: [] })),
    NO_OPINION,
  );
});

Deno.test("copilot: camelCase payload with --event, toolArgs as JSON text, modifiedArgs, agentStop", async () => {
  const copilot = (extra: Record<string, unknown>) => ({
    sessionId: "s1",
    timestamp: 1767225600000,
    cwd: dir,
    ...extra,
  });
  const deny = await run(
    "copilot",
    copilot({ toolName: "bash", toolArgs: JSON.stringify({ command: "rm -rf /" }) }),
    "preToolUse",
  );
  assertEquals(json(deny), { permissionDecision: "deny", permissionDecisionReason: GUARD_REASON });
  const rewrite = await run(
    "copilot",
    copilot({ toolName: "bash", toolArgs: '{"command":"rewrite-me"}' }),
    "preToolUse",
  );
  assertEquals(json(rewrite), { modifiedArgs: { command: "ls -la" } });
  assertEquals(
    await run("copilot", copilot({ toolName: "bash", toolArgs: '{"command":"ls"}' }), "preToolUse"),
    NO_OPINION,
  );
  const context = await run("copilot", copilot({ source: "new" }), "sessionStart");
  assertEquals(json(context), { additionalContext: CONTEXT });
  const stop = await run("copilot", copilot({ stopReason: "end_turn" }), "agentStop");
  assertEquals(json(stop), { decision: "block", reason: STOP_REASON });
  // The PascalCase ("VS Code compatible") form names its event and uses snake_case fields.
  const pascal = await run("copilot", {
    hook_event_name: "PreToolUse",
    session_id: "s1",
    timestamp: "2026-01-01T00:00:00Z",
    cwd: dir,
    tool_name: "Bash",
    tool_input: { command: "rm -rf /" },
  });
  assertEquals(json(pascal).permissionDecision, "deny");
  throws(() => agentCall("copilot", copilot({ toolName: "bash" })), /pass --event NAME/);
});

Deno.test("windsurf: exit 2 with the reason on stderr for pre-hooks, nothing else to say", async () => {
  const windsurf = (action: string, info: Record<string, unknown>) => ({
    agent_action_name: action,
    trajectory_id: "traj-1",
    execution_id: "exec-1",
    timestamp: "2026-01-01T00:00:00Z",
    tool_info: info,
  });
  const deny = await run(
    "windsurf",
    windsurf("pre_run_command", { command_line: "rm -rf /", cwd: dir }),
  );
  assertEquals(deny, { exitCode: 2, stdout: "", stderr: GUARD_REASON });
  assertEquals(
    await run("windsurf", windsurf("pre_run_command", { command_line: "ls", cwd: dir })),
    NO_OPINION,
  );
  // Windsurf cannot rewrite input: the call must not run as it was (SPEC §8), so it is blocked.
  const rewrite = await run(
    "windsurf",
    windsurf("pre_run_command", { command_line: "rewrite-me", cwd: dir }),
  );
  assertEquals(rewrite.exitCode, 2);
  match(rewrite.stderr, /cannot apply a rewrite to pre_run_command; blocked instead/);
  assertEquals(
    await run("windsurf", windsurf("pre_user_prompt", { user_prompt: "hi" })),
    NO_OPINION,
  );
  assertEquals(
    await run("windsurf", windsurf("post_setup_worktree", { worktree_path: "/w" })),
    NO_OPINION,
  );
});

Deno.test("agenthooks: §1 events as they are; exit 2 to block, JSON to rewrite or add context", async () => {
  const ah = (extra: Record<string, unknown>) => ({
    timestamp: "2024-01-15T10:30:00Z",
    session_id: "sess-abc123",
    work_dir: dir,
    ...extra,
  });
  const deny = await run(
    "agenthooks",
    ah({
      event_type: "pre-tool-call",
      tool_name: "Shell",
      tool_input: { command: "rm -rf /var/tmp" },
    }),
  );
  assertEquals(deny, { exitCode: 2, stdout: "", stderr: GUARD_REASON });
  const rewrite = await run(
    "agenthooks",
    ah({ event_type: "pre-tool-call", tool_name: "Shell", tool_input: { command: "rewrite-me" } }),
  );
  assertEquals(json(rewrite), { decision: "allow", modified_input: { command: "ls -la" } });
  const stop = await run(
    "agenthooks",
    ah({ event_type: "pre-agent-turn-stop", last_message: "done" }),
  );
  assertEquals(stop, { exitCode: 2, stdout: "", stderr: STOP_REASON });
  const context = await run("agenthooks", ah({ event_type: "pre-agent-turn", prompt: "hi" }));
  assertEquals(json(context), { decision: "allow", additional_context: CONTEXT });
});

Deno.test("a payload without a session id or an event name is refused, never guessed", () => {
  throws(
    () => agentCall("claude-code", { hook_event_name: "PreToolUse", tool_name: "Bash" }),
    /session id/,
  );
  throws(() => agentCall("claude-code", { session_id: "s" }), /names no event/);
  throws(() => agentCall("cursor", "not an object"), /JSON object/);
});

globalThis.addEventListener("unload", () => {
  executor.close();
  try {
    Deno.removeSync(dir, { recursive: true });
  } catch { /* gone */ }
});

Deno.test("hostile agent payloads: deep nesting is refused by name, never a crash", async () => {
  let deep: unknown = "x";
  for (let i = 0; i < 5_000; i++) deep = { a: deep };
  const call = agentCall(
    "claude-code",
    claude("PreToolUse", { tool_name: "Bash", tool_input: { command: "ls", deep } }),
  );
  await executor.dispatch(call.event).then(
    () => ok(false, "a 5,000-deep tool input was dispatched"),
    (err) => assertEquals(err.code, "JSON_TOO_DEEP"),
  );
  // Copilot's toolArgs arrive as JSON text: a deep one is read without recursion trouble.
  const text = "[".repeat(200_000) + "]".repeat(200_000);
  const copilot = agentCall(
    "copilot",
    { sessionId: "s", toolName: "bash", toolArgs: text },
    "preToolUse",
  );
  await executor.dispatch(copilot.event).then(
    (r) => assertEquals(r.decision, "allow"),
    (err) => assertEquals(err.code, "JSON_TOO_DEEP"),
  );
});

/** A result whose hooks replaced a post-tool-call's output (the redactor's job). */
function redacted(output: unknown) {
  return {
    ...blockedResult("post-tool-call", "", ""),
    decision: "allow" as const,
    reason: null,
    blocked_by: null,
    modified_output: output,
  };
}

Deno.test("modified_output reaches every agent that can carry it, in its own form", () => {
  const post = (agent: AgentName, payload: Record<string, unknown>, event?: string) =>
    agentAnswer(agentCall(agent, payload, event), redacted("key=[REDACTED]"));
  const tool = { tool_name: "Bash", tool_input: { command: "cat .env" } };
  const claudeOut = post("claude-code", claude("PostToolUse", { ...tool, tool_response: "x" }));
  assertEquals(json(claudeOut).hookSpecificOutput, {
    hookEventName: "PostToolUse",
    updatedToolOutput: "key=[REDACTED]",
  });
  const mcp = post(
    "claude-code",
    claude("PostToolUse", {
      tool_name: "mcp__db__q",
      tool_input: {},
      tool_response: [{ type: "text", text: "key=abc" }],
    }),
  );
  // In the shape of the tool's own output, which Claude Code requires.
  assertEquals(json(mcp).hookSpecificOutput.updatedMCPToolOutput, [
    { type: "text", text: "key=[REDACTED]" },
  ]);
  const bash = post(
    "claude-code",
    claude("PostToolUse", {
      ...tool,
      tool_response: { stdout: "key=abc", stderr: "warn abc", interrupted: false, isImage: false },
    }),
  );
  assertEquals(json(bash).hookSpecificOutput.updatedToolOutput, {
    stdout: "key=[REDACTED]",
    stderr: "",
    interrupted: false,
    isImage: false,
  });
  // Unknown shape (no tool_response): the turn ends rather than the output going on.
  const unknown = post("claude-code", claude("PostToolUse", { ...tool }));
  assertEquals(json(unknown).continue, false);
  match(json(unknown).stopReason, /could not be replaced for the model: key=\[REDACTED\]/);
  const codex = post("codex", claude("PostToolUse", { ...tool, tool_response: "x" }));
  assertEquals(json(codex), { decision: "block", reason: "key=[REDACTED]" });
  const gemini = post("gemini-cli", claude("AfterTool", { ...tool, tool_response: {} }));
  assertEquals(json(gemini), { decision: "deny", reason: "key=[REDACTED]" });
  const copilot = post("copilot", {
    sessionId: "s",
    toolName: "bash",
    toolArgs: "{}",
    toolResult: { resultType: "success", textResultForLlm: "x" },
  }, "postToolUse");
  assertEquals(json(copilot).modifiedResult, {
    resultType: "success",
    textResultForLlm: "key=[REDACTED]",
  });
  const agenthooks = post("agenthooks", {
    event_type: "post-tool-call",
    session_id: "s",
    ...tool,
    tool_output: "x",
  });
  assertEquals(json(agenthooks).modified_output, "key=[REDACTED]");
  const cursorMcp = post("cursor", {
    conversation_id: "c",
    hook_event_name: "postToolUse",
    tool_name: "MCP:query",
    tool_input: {},
    tool_output: "x",
  });
  assertEquals(json(cursorMcp).updated_mcp_tool_output, "key=[REDACTED]");
  // Where the agent has no carrier, a line says so: never dropped silently.
  const cursorShell = post("cursor", {
    conversation_id: "c",
    hook_event_name: "postToolUse",
    tool_name: "Shell",
    tool_input: {},
    tool_output: "x",
  });
  match(cursorShell.stderr, /cursor cannot replace the output of postToolUse/);
  const windsurf = post("windsurf", {
    agent_action_name: "post_run_command",
    trajectory_id: "t",
    tool_info: { command_line: "cat .env" },
  });
  match(windsurf.stderr, /windsurf cannot replace the output/);
});

Deno.test("codex: a rewrite is allow + updatedInput only where permission_mode says Codex will not ask", () => {
  const rewrite = {
    ...redacted(null),
    event_type: "pre-tool-call" as const,
    modified_output: null,
    modified_input: { command: "timeout 60 make" },
  };
  const call = (mode: string) =>
    agentCall("codex", claude("PreToolUse", { ...bash("make"), permission_mode: mode }));
  const bypass = json(agentAnswer(call("bypassPermissions"), rewrite)).hookSpecificOutput;
  assertEquals(bypass.permissionDecision, "allow");
  assertEquals(bypass.updatedInput.command, "timeout 60 make");
  const asks = json(agentAnswer(call("default"), rewrite)).hookSpecificOutput;
  assertEquals(asks.permissionDecision, "deny");
  match(asks.permissionDecisionReason, /timeout 60 make/);
});

Deno.test("results an agent cannot carry are never dropped without a word; a prompt rewrite blocks", () => {
  const base = { ...redacted(null), modified_output: null };
  const prompt = {
    ...base,
    event_type: "pre-agent-turn" as const,
    modified_input: "hi [redacted]",
  };
  const claudePrompt = agentCall("claude-code", claude("UserPromptSubmit", { prompt: "hi sk-1" }));
  const blocked = json(agentAnswer(claudePrompt, prompt));
  assertEquals(blocked.decision, "block");
  match(blocked.reason, /cannot apply a prompt rewrite; blocked instead/);
  const hooks = agentCall("agenthooks", {
    event_type: "pre-agent-turn",
    session_id: "s",
    prompt: "x",
  });
  assertEquals(json(agentAnswer(hooks, prompt)).modified_input, "hi [redacted]");
  // Copilot cannot block a prompt: the refusal is a line, not silence.
  const copilot = agentAnswer(
    agentCall("copilot", { sessionId: "s", prompt: "hi" }, "userPromptSubmitted"),
    prompt,
  );
  assertEquals([copilot.exitCode, copilot.stdout], [0, ""]);
  match(copilot.stderr, /copilot cannot block userPromptSubmitted; not applied: .*prompt rewrite/);
  // Tools a hook disabled: no agent's command protocol takes them.
  const disabled = agentAnswer(
    agentCall("claude-code", claude("PreToolUse", bash("ls"))),
    { ...base, event_type: "pre-tool-call", disable_tools: ["WebFetch"] },
  );
  match(disabled.stderr, /no way to disable tools from a hook; .*\(WebFetch\) was not applied/);
  match(json(disabled).systemMessage, /WebFetch/);
});

Deno.test("a hook's huge reason or context is cut for the model, with a marker and a line", () => {
  const call = agentCall("claude-code", claude("PreToolUse", bash("ls")));
  // An emoji (a surrogate pair) across the cut is never split.
  const reason = `${"r".repeat(MODEL_TEXT_MAX - 1)}😀${"r".repeat(100_000)}`;
  const answer = agentAnswer(call, blockedResult("pre-tool-call", reason, "huge"));
  const out = json(answer).hookSpecificOutput;
  assertEquals(out.permissionDecision, "deny");
  const kept = out.permissionDecisionReason as string;
  assertEquals(kept.split("\n[hookbox:")[0], "r".repeat(MODEL_TEXT_MAX - 1));
  match(kept, /\[hookbox: 100002 more characters cut\]$/);
  match(answer.stderr, /the hooks' reason is 116385 characters; claude-code is given the first/);
  match(json(answer).systemMessage, /the hooks' reason is 116385 characters/);
  // Added context, joined from every hook's inject, is cut the same way.
  const context = agentAnswer(
    agentCall("claude-code", claude("UserPromptSubmit", { prompt: "hi" })),
    {
      ...redacted(null),
      modified_output: null,
      event_type: "pre-agent-turn",
      inject: [{ role: "system", content: "c".repeat(20_000), persistent: false }, {
        role: "system",
        content: "d".repeat(20_000),
        persistent: false,
      }],
    },
  );
  const added = json(context).hookSpecificOutput.additionalContext as string;
  assertEquals(added.length, MODEL_TEXT_MAX + "\n[hookbox: 23618 more characters cut]".length);
  match(context.stderr, /added context is 40002 characters/);
  // What fits is handed on as it is, without a line.
  const small = agentAnswer(call, blockedResult("pre-tool-call", "r".repeat(MODEL_TEXT_MAX), "g"));
  assertEquals(json(small).hookSpecificOutput.permissionDecisionReason, "r".repeat(MODEL_TEXT_MAX));
  assertEquals(small.stderr, "");
});

Deno.test("shapedLike() fits a new output to the tool's own shape, or says it cannot", () => {
  const text = (t: string) => ({ value: t, text: t });
  // A replacement with every field of the original goes as it is.
  const same = { stdout: "a", stderr: "b", interrupted: false };
  assertEquals(shapedLike({ stdout: "x", stderr: "y", interrupted: true }, text("t")), {
    stdout: "t",
    stderr: "",
    interrupted: true,
  });
  assertEquals(
    shapedLike({ stdout: "x", stderr: "", interrupted: false }, {
      value: same,
      text: JSON.stringify(same),
    }),
    same,
  );
  // Read's output: what describes it stays, the text goes into `content`.
  assertEquals(
    shapedLike(
      { type: "text", file: { filePath: "/a", content: "secret", numLines: 1 } },
      text("t"),
    ),
    { type: "text", file: { filePath: "/a", content: "t", numLines: 1 } },
  );
  // A string output takes the string.
  assertEquals(shapedLike("secret", text("t")), "t");
  // No field that carries output, or nested past what is copied: cannot.
  assertEquals(shapedLike({ code: 1, note: "secret" }, text("t")), undefined);
  let deep: unknown = { stdout: "secret" };
  for (let i = 0; i < 40; i++) deep = { inner: deep };
  assertEquals(shapedLike(deep, text("t")), undefined);
});

Deno.test("a blocked tool output is withheld where the agent can replace it, and said where not", () => {
  const block = blockedResult("post-tool-call", "secret inside", "guard");
  const notice = "[hookbox: the tool's output was withheld: secret inside]";
  const copilot = agentAnswer(
    agentCall("copilot", {
      sessionId: "s",
      toolName: "bash",
      toolArgs: "{}",
      toolResult: { resultType: "success", textResultForLlm: "key=abc" },
    }, "postToolUse"),
    block,
  );
  assertEquals(json(copilot), {
    modifiedResult: { resultType: "success", textResultForLlm: notice },
  });
  const claudeOut = agentAnswer(
    agentCall(
      "claude-code",
      claude("PostToolUse", {
        tool_name: "Bash",
        tool_input: { command: "cat .env" },
        tool_response: { stdout: "key=abc", stderr: "", interrupted: false, isImage: false },
      }),
    ),
    block,
  );
  assertEquals(json(claudeOut).hookSpecificOutput.updatedToolOutput.stdout, notice);
  // Cursor replaces only MCP tools' output: a shell's goes on, and stderr says so with the reason.
  const cursor = agentAnswer(
    agentCall("cursor", {
      conversation_id: "c",
      hook_event_name: "postToolUse",
      tool_name: "Shell",
      tool_input: {},
      tool_output: "key=abc",
    }),
    block,
  );
  assertEquals(cursor.stdout, "");
  match(cursor.stderr, /cursor cannot block postToolUse; not applied: secret inside/);
});
