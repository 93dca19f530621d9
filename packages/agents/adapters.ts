/**
 * Agent CLI adapters (SPEC §8): each agent's hook stdin JSON → the §1 event
 * of the same moment, and a dispatch result → that agent's own answer (exit
 * code, stdout JSON, stderr). Web APIs only: `hookbox dispatch --agent` and
 * the service's `POST /v1/agents/{agent}/events` both use it. The field
 * names and output forms follow `docs/ADAPTERS.md` (sources in
 * `../shared/research/agent-hook-formats.md`).
 *
 * Rules common to every agent: an allow is "no opinion" (exit 0, no
 * permission decision — hookbox never approves a tool call past the agent's
 * own permission flow); stdout, when not empty, is exactly one JSON object;
 * an agent event with no §1 counterpart passes through as an allow.
 *
 * @module
 */
import type { DispatchResult } from "../core/dispatch/result.ts";
import { HookboxError } from "../core/errors.ts";
import type { EventType } from "../core/schema/event_types.ts";
import { copyLazy, stringifyLazy } from "../core/schema/lazy_json.ts";

/** The agents hookbox answers for. */
export const AGENTS = [
  "claude-code",
  "codex",
  "gemini-cli",
  "cursor",
  "copilot",
  "windsurf",
  "agenthooks",
] as const;

/** One of {@linkcode AGENTS}. */
export type AgentName = typeof AGENTS[number];

/** True when `name` is an agent hookbox has an adapter for. */
export function isAgentName(name: string): name is AgentName {
  return (AGENTS as readonly string[]).includes(name);
}

/** What an agent's hook call turned into. */
export interface AgentCall {
  /** The agent that called. */
  agent: AgentName;
  /** The agent's own event name. */
  agentEvent: string;
  /** The §1 event to dispatch, or null when the agent event has none (pass through). */
  event: Record<string, unknown> | null;
  /** The agent's payload as received. */
  input: Record<string, unknown>;
}

/** The answer in the agent's protocol. */
export interface AgentAnswer {
  /** The hook command's exit code. */
  exitCode: number;
  /** Empty, or exactly one JSON object. */
  stdout: string;
  /** What the agent shows or feeds back (a block's reason, a warning line). */
  stderr: string;
}

/** An agent's hook payload. */
export type Payload = Record<string, unknown>;
/** The event fields made of a payload. */
export type Fields = (p: Payload) => Payload;

/** One agent event: its §1 event and how the payload's fields map onto it. */
export interface Mapping {
  /** The hookbox event it becomes. */
  type: EventType;
  /** How its fields are made of the payload. */
  fields: Fields;
}

const str = (v: unknown): string | undefined => typeof v === "string" ? v : undefined;
const obj = (v: unknown): Payload | undefined =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? v as Payload : undefined;
/** The JSON text each object {@linkcode objOrJson} parsed was made of. */
const parsedFrom = new WeakMap<object, string>();
/** A JSON object given as an object or as JSON text (Cursor, Copilot). */
const objOrJson = (v: unknown): Payload => {
  if (typeof v === "string") {
    try {
      const parsed = obj(JSON.parse(v));
      if (parsed !== undefined) {
        parsedFrom.set(parsed, v);
        return parsed;
      }
      return { value: v };
    } catch {
      return { value: v };
    }
  }
  return obj(v) ?? {};
};
const nullish = (v: unknown): unknown => v === undefined ? null : v;

// ---- Claude Code and Codex (the same wire format) -----------------------------------------------

/** `tool_name`, `tool_input` (an object, or JSON text as Cursor's MCP events send it), `tool_use_id`. */
const claudeTool: Fields = (p) => ({
  tool_name: str(p.tool_name) ?? "",
  tool_input: objOrJson(p.tool_input),
  ...(str(p.tool_use_id) ? { tool_use_id: p.tool_use_id } : {}),
});

const CLAUDE: Record<string, Mapping> = {
  SessionStart: { type: "pre-session", fields: (p) => ({ source: str(p.source) }) },
  SessionEnd: { type: "post-session", fields: (p) => ({ reason: str(p.reason) }) },
  UserPromptSubmit: { type: "pre-agent-turn", fields: (p) => ({ prompt: str(p.prompt) ?? "" }) },
  PreToolUse: { type: "pre-tool-call", fields: claudeTool },
  PostToolUse: {
    type: "post-tool-call",
    fields: (p) => ({ ...claudeTool(p), tool_output: nullish(p.tool_response) }),
  },
  PostToolUseFailure: {
    type: "post-tool-call-failure",
    fields: (p) => ({ ...claudeTool(p), error: nullish(p.error) }),
  },
  Stop: {
    type: "pre-agent-turn-stop",
    fields: (p) => ({
      last_message: str(p.last_assistant_message) ?? "",
      stop_count: p.stop_hook_active === true ? 1 : 0,
    }),
  },
  SubagentStart: {
    type: "pre-subagent",
    fields: (p) => ({ subagent_name: str(p.agent_type) ?? "subagent", task: nullish(p.agent_id) }),
  },
  SubagentStop: {
    type: "post-subagent",
    fields: (p) => ({
      subagent_name: str(p.agent_type) ?? "subagent",
      task: nullish(p.agent_id),
      result: str(p.last_assistant_message) ?? null,
    }),
  },
  PreCompact: {
    type: "pre-context-compact",
    fields: (p) => ({ message_count: 0, trigger: str(p.trigger) }),
  },
  PostCompact: {
    type: "post-context-compact",
    fields: (p) => ({ summary: str(p.compact_summary) ?? "", compacted_count: 0 }),
  },
};

// ---- Gemini CLI ---------------------------------------------------------------------------------

const GEMINI: Record<string, Mapping> = {
  SessionStart: CLAUDE.SessionStart!,
  SessionEnd: CLAUDE.SessionEnd!,
  BeforeAgent: CLAUDE.UserPromptSubmit!,
  AfterAgent: {
    type: "pre-agent-turn-stop",
    fields: (p) => ({
      last_message: str(p.prompt_response) ?? "",
      stop_count: p.stop_hook_active === true ? 1 : 0,
    }),
  },
  BeforeTool: { type: "pre-tool-call", fields: claudeTool },
  AfterTool: {
    type: "post-tool-call",
    fields: (p) => ({ ...claudeTool(p), tool_output: nullish(p.tool_response) }),
  },
  PreCompress: {
    type: "pre-context-compact",
    fields: (p) => ({ message_count: 0, trigger: str(p.trigger) }),
  },
};

// ---- Cursor -------------------------------------------------------------------------------------

const CURSOR: Record<string, Mapping> = {
  sessionStart: { type: "pre-session", fields: (p) => ({ source: str(p.composer_mode) }) },
  sessionEnd: { type: "post-session", fields: (p) => ({ reason: str(p.reason) }) },
  beforeSubmitPrompt: { type: "pre-agent-turn", fields: (p) => ({ prompt: str(p.prompt) ?? "" }) },
  preToolUse: { type: "pre-tool-call", fields: claudeTool },
  postToolUse: {
    type: "post-tool-call",
    fields: (p) => ({ ...claudeTool(p), tool_output: nullish(p.tool_output) }),
  },
  postToolUseFailure: {
    type: "post-tool-call-failure",
    fields: (p) => ({ ...claudeTool(p), error: nullish(p.error_message) }),
  },
  beforeShellExecution: {
    type: "pre-tool-call",
    fields: (p) => ({ tool_name: "Shell", tool_input: { command: str(p.command) ?? "" } }),
  },
  beforeMCPExecution: { type: "pre-tool-call", fields: claudeTool },
  beforeReadFile: {
    type: "pre-tool-call",
    fields: (p) => ({ tool_name: "Read", tool_input: { file_path: str(p.file_path) ?? "" } }),
  },
  subagentStart: {
    type: "pre-subagent",
    fields: (p) => ({ subagent_name: str(p.subagent_type) ?? "subagent", task: nullish(p.task) }),
  },
  subagentStop: {
    type: "post-subagent",
    fields: (p) => ({
      subagent_name: str(p.subagent_type) ?? "subagent",
      task: nullish(p.task),
      result: nullish(p.summary),
    }),
  },
  preCompact: {
    type: "pre-context-compact",
    fields: (p) => ({ message_count: typeof p.message_count === "number" ? p.message_count : 0 }),
  },
  stop: {
    type: "pre-agent-turn-stop",
    fields: (p) => ({
      last_message: "",
      stop_count: typeof p.loop_count === "number" ? p.loop_count : 0,
    }),
  },
  afterAgentResponse: { type: "post-agent-turn", fields: (p) => ({ response: nullish(p.text) }) },
};

// ---- Copilot (camelCase payloads; PascalCase event keys send Claude's snake_case form) ----------

const copilotTool: Fields = (p) => ({
  tool_name: str(p.toolName) ?? str(p.tool_name) ?? "",
  tool_input: objOrJson(p.toolArgs ?? p.tool_input),
});

const COPILOT: Record<string, Mapping> = {
  sessionStart: { type: "pre-session", fields: (p) => ({ source: str(p.source) }) },
  sessionEnd: { type: "post-session", fields: (p) => ({ reason: str(p.reason) }) },
  userPromptSubmitted: { type: "pre-agent-turn", fields: (p) => ({ prompt: str(p.prompt) ?? "" }) },
  preToolUse: { type: "pre-tool-call", fields: copilotTool },
  postToolUse: {
    type: "post-tool-call",
    fields: (p) => ({ ...copilotTool(p), tool_output: nullish(p.toolResult ?? p.tool_response) }),
  },
  postToolUseFailure: {
    type: "post-tool-call-failure",
    fields: (p) => ({ ...copilotTool(p), error: nullish(p.error) }),
  },
  agentStop: {
    type: "pre-agent-turn-stop",
    fields: (p) => ({ last_message: "", stop_count: p.stop_hook_active === true ? 1 : 0 }),
  },
  subagentStart: {
    type: "pre-subagent",
    fields: (p) => ({
      subagent_name: str(p.agentName) ?? "subagent",
      task: nullish(p.agentDescription),
    }),
  },
  subagentStop: {
    type: "post-subagent",
    fields: (p) => ({
      subagent_name: str(p.agentName) ?? "subagent",
      task: null,
      result: nullish(p.response),
    }),
  },
  preCompact: { type: "pre-context-compact", fields: () => ({ message_count: 0 }) },
};
/** Copilot's PascalCase ("VS Code compatible") event keys, in its camelCase names. */
const COPILOT_PASCAL: Record<string, string> = {
  SessionStart: "sessionStart",
  SessionEnd: "sessionEnd",
  UserPromptSubmit: "userPromptSubmitted",
  PreToolUse: "preToolUse",
  PostToolUse: "postToolUse",
  PostToolUseFailure: "postToolUseFailure",
  Stop: "agentStop",
  SubagentStop: "subagentStop",
  PreCompact: "preCompact",
};

// ---- Windsurf -----------------------------------------------------------------------------------

const windsurfTool = (name: string, input: (info: Payload) => Payload): Fields => (p) => {
  const info = obj(p.tool_info) ?? {};
  return { tool_name: name, tool_input: input(info) };
};
const readInput = (i: Payload) => ({ file_path: str(i.file_path) ?? "" });
const writeInput = (i: Payload) => ({ file_path: str(i.file_path) ?? "", edits: i.edits ?? [] });
const runInput = (i: Payload) => ({ command: str(i.command_line) ?? "", cwd: str(i.cwd) });
const mcpName = (p: Payload) => {
  const i = obj(p.tool_info) ?? {};
  return `mcp__${str(i.mcp_server_name) ?? ""}__${str(i.mcp_tool_name) ?? ""}`;
};
const mcpTool: Fields = (p) => ({
  tool_name: mcpName(p),
  tool_input: objOrJson((obj(p.tool_info) ?? {}).mcp_tool_arguments),
});
const post = (pre: Fields, output: (i: Payload) => unknown): Fields => (p) => ({
  ...pre(p),
  tool_output: nullish(output(obj(p.tool_info) ?? {})),
});

const WINDSURF: Record<string, Mapping> = {
  pre_read_code: { type: "pre-tool-call", fields: windsurfTool("read_code", readInput) },
  pre_write_code: { type: "pre-tool-call", fields: windsurfTool("write_code", writeInput) },
  pre_run_command: { type: "pre-tool-call", fields: windsurfTool("run_command", runInput) },
  pre_mcp_tool_use: { type: "pre-tool-call", fields: mcpTool },
  post_read_code: {
    type: "post-tool-call",
    fields: post(windsurfTool("read_code", readInput), () => null),
  },
  post_write_code: {
    type: "post-tool-call",
    fields: post(windsurfTool("write_code", writeInput), () => null),
  },
  post_run_command: {
    type: "post-tool-call",
    fields: post(windsurfTool("run_command", runInput), () => null),
  },
  post_mcp_tool_use: { type: "post-tool-call", fields: post(mcpTool, (i) => i.mcp_result) },
  pre_user_prompt: {
    type: "pre-agent-turn",
    fields: (p) => ({ prompt: str((obj(p.tool_info) ?? {}).user_prompt) ?? "" }),
  },
  post_cascade_response: {
    type: "post-agent-turn",
    fields: (p) => ({ response: nullish((obj(p.tool_info) ?? {}).response) }),
  },
};

/** Every agent's events that map to a §1 event, by the agent's own event name. */
export const AGENT_EVENTS: Readonly<Record<AgentName, Readonly<Record<string, Mapping>>>> = {
  "claude-code": CLAUDE,
  codex: {
    SessionStart: CLAUDE.SessionStart!,
    UserPromptSubmit: CLAUDE.UserPromptSubmit!,
    PreToolUse: CLAUDE.PreToolUse!,
    PostToolUse: CLAUDE.PostToolUse!,
    PreCompact: CLAUDE.PreCompact!,
    PostCompact: CLAUDE.PostCompact!,
    SubagentStart: CLAUDE.SubagentStart!,
    SubagentStop: CLAUDE.SubagentStop!,
    Stop: CLAUDE.Stop!,
  },
  "gemini-cli": GEMINI,
  cursor: CURSOR,
  copilot: COPILOT,
  windsurf: WINDSURF,
  // Agent Hooks payloads are §1 events already (same names, `event_type`).
  agenthooks: {},
};

/**
 * Reads an agent's hook payload. `eventName` is the agent's event when the
 * payload does not name it (Copilot's camelCase form), or overrides it.
 * Throws `EVENT_INVALID` for a payload that is not a JSON object or names no
 * event. `at` is the event's `timestamp` (now by default).
 */
export function agentCall(
  agent: AgentName,
  input: unknown,
  eventName?: string,
  at: string = new Date().toISOString(),
): AgentCall {
  const payload = obj(input);
  if (!payload) {
    throw new HookboxError("EVENT_INVALID", `${agent}: the hook input must be a JSON object`);
  }
  if (agent === "agenthooks") {
    const type = str(payload.event_type) ?? eventName;
    if (!type) throw missingEvent(agent, "event_type");
    return { agent, agentEvent: type, event: { ...payload, event_type: type }, input: payload };
  }
  let name = eventName ?? str(payload.hook_event_name) ?? str(payload.agent_action_name);
  if (!name) {
    throw missingEvent(agent, agent === "windsurf" ? "agent_action_name" : "hook_event_name");
  }
  if (agent === "copilot") name = COPILOT_PASCAL[name] ?? name;
  const mapping = AGENT_EVENTS[agent][name];
  if (!mapping) return { agent, agentEvent: name, event: null, input: payload };
  const fields = mapping.fields(payload);
  const event: Record<string, unknown> = {
    event_type: mapping.type,
    timestamp: at,
    session_id: sessionOf(payload) ?? "",
    ...workDirOf(payload),
    ...fields,
    // The agent's own payload rides along for hooks that want more than §1 names.
    agent: { name: agent, event: name, ...payloadBesides(payload, fields) },
  };
  if (event.session_id === "") {
    throw new HookboxError("EVENT_INVALID", `${agent}: the hook input carries no session id`, {
      field: "session_id",
    });
  }
  const turn = str(payload.turn_id) ?? str(payload.prompt_id) ?? str(payload.execution_id) ??
    str(payload.generation_id);
  if (turn) event.turn_id = turn;
  return { agent, agentEvent: name, event, input: payload };
}

/**
 * The payload as `agent.input`, without the values the event carries already
 * under a §1 name (the same object, array or text, or an object parsed from
 * the text: `tool_response` is `tool_output`), and `moved`, where each went.
 * A tool's output or argument then counts once against the policy's
 * `input_kb`, not twice: carried twice, a 600 KB output went over the default
 * 1 MiB, and the closed `secret-redactor` withheld it from the agent.
 */
function payloadBesides(
  payload: Payload,
  fields: Payload,
): { input: Payload; moved?: Record<string, string> } {
  let input = payload;
  let moved: Record<string, string> | undefined;
  const names = Object.keys(fields);
  for (const [key, value] of Object.entries(payload)) {
    if (typeof value !== "string" && (typeof value !== "object" || value === null)) continue;
    const field = names.find((name) => {
      const held = fields[name];
      return held === value ||
        (typeof value === "string" && typeof held === "object" && held !== null &&
          parsedFrom.get(held) === value);
    });
    if (field === undefined) continue;
    if (input === payload) input = { ...payload };
    delete input[key];
    (moved ??= {})[key] = field;
  }
  return moved === undefined ? { input } : { input, moved };
}

function missingEvent(agent: string, field: string): HookboxError {
  return new HookboxError(
    "EVENT_INVALID",
    `${agent}: the hook input names no event (${field}); pass --event NAME`,
    { field },
  );
}

function sessionOf(p: Payload): string | undefined {
  return str(p.session_id) ?? str(p.sessionId) ?? str(p.conversation_id) ?? str(p.trajectory_id);
}

function workDirOf(p: Payload): Payload {
  const roots = Array.isArray(p.workspace_roots) ? p.workspace_roots : [];
  const dir = str(p.cwd) ?? str(roots[0]) ?? str((obj(p.tool_info) ?? {}).cwd);
  return dir && dir.startsWith("/") ? { work_dir: dir } : {};
}

/** The answer for an agent event that maps to no §1 event: no opinion. */
export function passThrough(call: AgentCall): AgentAnswer {
  return allowAnswer(call);
}

function allowAnswer(call: AgentCall): AgentAnswer {
  // Codex wants JSON on exit 0 from Stop and SubagentStop.
  const json = call.agent === "codex" &&
    (call.agentEvent === "Stop" || call.agentEvent === "SubagentStop");
  return { exitCode: 0, stdout: json ? "{}" : "", stderr: "" };
}

/** The object each JSON answer was written from, for {@linkcode withNotices}. */
const ANSWER_JSON = new WeakMap<AgentAnswer, Payload>();

const answerJson = (value: Payload): AgentAnswer => {
  // The agent's own big parts that hookbox has not read are copied as their text (lazy_json.ts).
  const answer = { exitCode: 0, stdout: stringifyLazy(value), stderr: "" };
  ANSWER_JSON.set(answer, value);
  return answer;
};
const exit2 = (reason: string): AgentAnswer => ({ exitCode: 2, stdout: "", stderr: reason });

/** The text the hooks asked to add to the agent's context, or null. */
function contextOf(result: DispatchResult): string | null {
  const parts = result.inject.map((i) => i.content).filter((c) => c.trim() !== "");
  return parts.length > 0 ? parts.join("\n\n") : null;
}

/** The tool input after the hooks' rewrite: the agent's other fields kept (Claude replaces the whole object). */
function rewritten(call: AgentCall, result: DispatchResult): Payload | null {
  const modified = obj(result.modified_input);
  if (!modified) return null;
  const original = obj(call.event?.tool_input) ?? {};
  // As `{ ...original, ...modified }`, with the agent's big fields left unread (lazy_json.ts).
  const merged = copyLazy(original);
  for (const key of Object.keys(modified)) {
    Object.defineProperty(merged, key, {
      value: modified[key],
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  return merged;
}

/** The tool output the hooks replaced, as the agent's model would read it (text), or null. */
function replacedOutput(result: DispatchResult): { value: unknown; text: string } | null {
  if (result.event_type !== "post-tool-call" || result.modified_output === null) return null;
  const value = result.modified_output;
  return { value, text: typeof value === "string" ? value : JSON.stringify(value) };
}

/** What one agent answer is built from. */
interface Parts {
  blocked: boolean;
  reason: string;
  context: string | null;
  input: Payload | null;
  output: { value: unknown; text: string } | null;
}

/**
 * Most characters of a block's reason, and of the context the hooks add, that
 * an agent is given for its model. A hook may write a reason of a mebibyte
 * (its `output_kb`); handed on whole, one such answer fills a model's context
 * window (Copilot CLI then compacts the conversation away) and is paid for
 * in tokens on every turn that carries it. Claude Code, Gemini CLI and
 * Copilot CLI handed a deny's whole reason to the model (Codex CLI keeps
 * about 6,000 characters of it).
 */
export const MODEL_TEXT_MAX = 16_384;

/**
 * `text` cut to {@linkcode MODEL_TEXT_MAX} characters (never inside a
 * surrogate pair) with a marker saying how much was cut, and a notice line
 * for the person running the agent; `text` and null when it fits.
 */
function forModel(text: string, what: string, agent: string): [string, string | null] {
  if (text.length <= MODEL_TEXT_MAX) return [text, null];
  let end = MODEL_TEXT_MAX;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  const cut = text.length - end;
  return [
    `${text.slice(0, end)}\n[hookbox: ${cut} more characters cut]`,
    `hookbox: the hooks' ${what} is ${text.length} characters; ${agent} is given the first ` +
    `${end} (the whole text: the decision's audit row, or hookbox dispatch without --agent)`,
  ];
}

/** Answers a dispatch result in the agent's protocol. */
export function agentAnswer(call: AgentCall, result: DispatchResult): AgentAnswer {
  const lines: string[] = [];
  const bounded = (text: string, what: string) => {
    const [kept, line] = forModel(text, what, call.agent);
    if (line !== null) lines.push(line);
    return kept;
  };
  const context = contextOf(result);
  const parts: Parts = {
    blocked: result.decision === "block",
    reason: bounded(
      result.reason ?? `blocked by hookbox hook "${result.blocked_by ?? "?"}"`,
      "reason",
    ),
    context: context === null ? null : bounded(context, "added context"),
    input: rewritten(call, result),
    output: replacedOutput(result),
  };
  const type = call.event?.event_type as EventType | undefined;
  const prompt = type === "pre-agent-turn" && typeof result.modified_input === "string"
    ? result.modified_input
    : null;
  if (prompt !== null && !parts.blocked && call.agent !== "agenthooks") {
    // No agent hookbox answers can take a rewritten prompt: the original must not go on.
    parts.blocked = true;
    parts.reason = `hookbox: a hook rewrote this prompt, and ${call.agent} cannot apply a ` +
      `prompt rewrite; blocked instead (the rewrite: ${JSON.stringify(prompt).slice(0, 200)})`;
  }
  if (result.disable_tools.length > 0 && call.agent !== "agenthooks") {
    lines.push(
      `hookbox: ${call.agent} has no way to disable tools from a hook; the hooks' ` +
        `disable_tools (${result.disable_tools.join(", ")}) was not applied`,
    );
  }
  if (parts.blocked && type === "post-tool-call" && call.agent !== "agenthooks") {
    // The tool has run: Claude Code and Copilot hand its output to the model beside a block's
    // reason. What a guard blocked is withheld instead, where the agent can replace the output.
    const notice = withheldNotice(parts.reason);
    const withheld = answerIn(
      call,
      type,
      { ...parts, blocked: false, output: { value: notice, text: notice } },
      prompt,
    );
    // Replaced only where the answer carries it (no agent takes a replacement on stderr).
    if (
      withheld.stdout !== "" &&
      !sameAnswer(withheld, answerIn(call, type, { ...parts, blocked: false }, prompt))
    ) {
      return withNotices(call, withheld, lines);
    }
  }
  const answer = answerIn(call, type, parts, prompt);
  if (
    parts.blocked && sameAnswer(answer, answerIn(call, type, { ...parts, blocked: false }, prompt))
  ) {
    // The agent has no block for this event: say so rather than let it pass without a word.
    lines.push(
      `hookbox: ${call.agent} cannot block ${call.agentEvent}; not applied: ${parts.reason}`,
    );
  }
  return withNotices(call, answer, lines);
}

/** What the model reads in place of a tool's output that a hook blocked or hookbox could not read. */
export function withheldNotice(reason: string): string {
  return `[hookbox: the tool's output was withheld: ${reason}]`;
}

function sameAnswer(a: AgentAnswer, b: AgentAnswer): boolean {
  return a.exitCode === b.exitCode && a.stdout === b.stdout && a.stderr === b.stderr;
}

/** {@linkcode agentAnswer}'s answer in the agent's own form. */
function answerIn(
  call: AgentCall,
  type: EventType | undefined,
  parts: Parts,
  prompt: string | null,
): AgentAnswer {
  switch (call.agent) {
    case "claude-code":
    case "codex":
      return claudeAnswer(call, type, parts);
    case "gemini-cli":
      return geminiAnswer(type, parts);
    case "cursor":
      return cursorAnswer(call, type, parts);
    case "copilot":
      return copilotAnswer(call, type, parts);
    case "windsurf":
      if (parts.blocked && call.agentEvent.startsWith("pre_")) return exit2(parts.reason);
      // A rewrite Windsurf cannot apply: the call must not run as it was.
      if (parts.input && call.agentEvent.startsWith("pre_")) {
        return exit2(rewriteRefused(call, parts));
      }
      return withNotices(call, allowAnswer(call), uncarried(call, parts));
    case "agenthooks": {
      if (parts.blocked) return exit2(parts.reason);
      const out: Payload = {};
      if (parts.input) out.modified_input = parts.input;
      if (prompt !== null) out.modified_input = prompt;
      if (parts.output) out.modified_output = parts.output.value;
      if (parts.context) out.additional_context = parts.context;
      return Object.keys(out).length > 0
        ? answerJson({ decision: "allow", ...out })
        : allowAnswer(call);
    }
  }
}

/** One line per result the agent's protocol cannot carry for this event (never dropped silently). */
function uncarried(call: AgentCall, parts: Parts): string[] {
  const lines: string[] = [];
  if (parts.output) {
    lines.push(
      `hookbox: ${call.agent} cannot replace the output of ${call.agentEvent}; ` +
        `the hooks' replacement was not applied`,
    );
  }
  if (parts.input) {
    lines.push(
      `hookbox: ${call.agent} cannot rewrite the input of ${call.agentEvent}; ` +
        `the hooks' rewrite was not applied`,
    );
  }
  return lines;
}

/** The block for a rewrite the agent cannot apply to this event (the original must not run). */
function rewriteRefused(call: AgentCall, parts: Parts): string {
  return `hookbox: a hook rewrote this call to ${stringifyLazy(parts.input)}, and ` +
    `${call.agent} cannot apply a rewrite to ${call.agentEvent}; blocked instead`;
}

/** Agents whose answer JSON shows a `systemMessage` to the user, and for which events. */
function showsSystemMessage(call: AgentCall): boolean {
  if (call.agent === "claude-code" || call.agent === "gemini-cli") return true;
  // Codex marks a PreToolUse/PostToolUse hook failed on fields it does not know.
  return call.agent === "codex" && !/ToolUse$/.test(call.agentEvent);
}

/**
 * `answer` with `lines` (failed hooks, skipped folders, results not carried)
 * on stderr and, where the agent shows one, in its `systemMessage`.
 */
export function withNotices(call: AgentCall, answer: AgentAnswer, lines: string[]): AgentAnswer {
  if (lines.length === 0) return answer;
  const text = lines.join("\n");
  const stderr = answer.stderr ? `${answer.stderr}\n${text}` : text;
  if (answer.exitCode !== 0 || !showsSystemMessage(call)) return { ...answer, stderr };
  // The object the answer was written from, when it was (not parsed back: it may hold big
  // parts of the agent's payload still unread, lazy_json.ts), else its stdout parsed.
  let json: Payload | undefined = ANSWER_JSON.get(answer);
  try {
    json ??= answer.stdout ? JSON.parse(answer.stdout) as Payload : {};
  } catch {
    return { ...answer, stderr };
  }
  const message = typeof json.systemMessage === "string" ? `${json.systemMessage}\n${text}` : text;
  const noticed = answerJson({ ...json, systemMessage: message });
  noticed.stderr = stderr;
  return noticed;
}

function claudeAnswer(call: AgentCall, type: EventType | undefined, parts: Parts): AgentAnswer {
  const { blocked, reason, context, input, output } = parts;
  const hookEventName = call.agentEvent;
  if (type === "pre-tool-call") {
    if (blocked) {
      return answerJson({
        hookSpecificOutput: {
          hookEventName,
          permissionDecision: "deny",
          permissionDecisionReason: reason,
        },
      });
    }
    if (input && call.agent === "codex") return codexRewrite(call, input, context);
    const specific: Payload = { hookEventName };
    if (input) specific.updatedInput = input;
    if (context) specific.additionalContext = context;
    return Object.keys(specific).length > 1
      ? answerJson({ hookSpecificOutput: specific })
      : allowAnswer(call);
  }
  const canBlock = type === "pre-agent-turn" || type === "pre-agent-turn-stop" ||
    type === "post-subagent" || type === "post-tool-call" || type === "pre-context-compact";
  if (blocked && canBlock) {
    // Stop / SubagentStop: the agent continues with the reason as its next instruction.
    return answerJson({ decision: "block", reason });
  }
  if (output && type === "post-tool-call") {
    if (call.agent === "codex") {
      // Codex: a PostToolUse block's reason becomes exactly the tool's output for the model.
      return answerJson({ decision: "block", reason: output.text });
    }
    const mcp = call.event?.tool_name;
    const field = typeof mcp === "string" && mcp.startsWith("mcp__")
      ? "updatedMCPToolOutput"
      : "updatedToolOutput";
    const value = call.input.tool_response === undefined
      ? undefined
      : shapedLike(call.input.tool_response, output);
    if (value === undefined) {
      // The tool's output could not be read, or no field of it can carry the new one: Claude
      // Code would ignore the replacement and hand the model the original (a block too hands
      // it on, beside the reason). Ending the turn is what keeps it from the model.
      return answerJson({
        continue: false,
        stopReason: `hookbox stopped the turn: this ${
          call.event?.tool_name || "tool"
        } output could not be replaced for the model: ${output.text}`,
      });
    }
    const specific: Payload = { hookEventName, [field]: value };
    if (context) specific.additionalContext = context;
    return answerJson({ hookSpecificOutput: specific });
  }
  const withContext = type === "pre-session" || type === "pre-agent-turn" ||
    type === "post-tool-call" || type === "post-tool-call-failure" || type === "pre-subagent";
  if (context && withContext) {
    return answerJson({ hookSpecificOutput: { hookEventName, additionalContext: context } });
  }
  return allowAnswer(call);
}

/** Fields of a tool's output that describe it rather than carry it: kept when it is replaced. */
const OUTPUT_FRAME = new Set([
  "type",
  "filePath",
  "file_path",
  "path",
  "mimeType",
  "media_type",
  "mode",
  "name",
]);
/** Fields that carry a tool's output, first choice first, for a replacement given as text. */
const OUTPUT_TEXT = ["stdout", "content", "output", "text", "result"];

/**
 * The new output `output` in the shape of the tool's own (`original`):
 * Claude Code 2.1.197 ignores an `updatedToolOutput` that does not fit the
 * tool's output schema and hands the model the original (measured: a string
 * for Bash, or `{stdout}` alone, is dropped). A replacement with every field
 * of the original is given as it is; otherwise its text goes into the field
 * that carries the output (`stdout`, `content`, ...), every other text field
 * is emptied and fields that only describe the output (`type`, `filePath`)
 * and non-text ones are kept. Undefined when no field can carry it.
 */
export function shapedLike(
  original: unknown,
  output: { value: unknown; text: string },
): unknown {
  if (typeof original !== "object" || original === null) return output.value;
  const fits = typeof output.value === "object" && output.value !== null &&
    Array.isArray(output.value) === Array.isArray(original) &&
    Object.keys(original).every((key) => Object.hasOwn(output.value as object, key));
  if (fits) return output.value;
  // Deeper than this, no original text is left behind unseen: the output is not shaped.
  let tooDeep = false;
  const place = (node: unknown, key: string | null, depth: number): unknown => {
    if (typeof node === "string") {
      if (key !== null && OUTPUT_FRAME.has(key)) return node;
      return "";
    }
    if (typeof node !== "object" || node === null) return node;
    if (depth > SHAPE_DEPTH) {
      tooDeep = true;
      return null;
    }
    if (Array.isArray(node)) return node.map((item) => place(item, key, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node)) out[k] = place(v, k, depth + 1);
    return out;
  };
  const shaped = place(original, null, 0) as Record<string, unknown> | unknown[];
  if (tooDeep) return undefined;
  // The text goes into the first field that carries output, by preference, at any depth.
  const slot = (node: unknown, depth: number): boolean => {
    if (typeof node !== "object" || node === null || depth > SHAPE_DEPTH) return false;
    const record = node as Record<string, unknown>;
    for (const name of OUTPUT_TEXT) {
      if (!Array.isArray(node) && typeof record[name] === "string") {
        record[name] = output.text;
        return true;
      }
    }
    for (const child of Object.values(record)) if (slot(child, depth + 1)) return true;
    return false;
  };
  return slot(shaped, 0) ? shaped : undefined;
}

/** Most levels of a tool's output {@linkcode shapedLike} copies. */
const SHAPE_DEPTH = 16;

/** Permission modes in which Codex runs a call without asking (the payload's `permission_mode`). */
const CODEX_NO_APPROVAL = new Set(["bypassPermissions", "never", "dontAsk"]);

/**
 * A Codex rewrite. Codex applies `updatedInput` only with `permissionDecision:
 * "allow"`, which approves the call: given only where the payload's
 * `permission_mode` says Codex would not ask anyway; elsewhere a deny naming
 * the rewritten call (hookbox never approves past the agent's own approval).
 */
function codexRewrite(call: AgentCall, input: Payload, context: string | null): AgentAnswer {
  const hookEventName = call.agentEvent;
  const mode = str(call.input.permission_mode);
  if (mode !== undefined && CODEX_NO_APPROVAL.has(mode) && typeof input.command === "string") {
    const specific: Payload = { hookEventName, permissionDecision: "allow", updatedInput: input };
    if (context) specific.additionalContext = context;
    return answerJson({ hookSpecificOutput: specific });
  }
  return answerJson({
    hookSpecificOutput: {
      hookEventName,
      permissionDecision: "deny",
      permissionDecisionReason: `hookbox rewrote this call; Codex asks for approval here ` +
        `(permission_mode ${mode ?? "unknown"}), so run it as ${stringifyLazy(input)}`,
    },
  });
}

function geminiAnswer(type: EventType | undefined, parts: Parts): AgentAnswer {
  const { blocked, reason, context, input, output } = parts;
  // Gemini decides on the parsed JSON only (exit codes are unreliable there).
  const canBlock = type === "pre-tool-call" || type === "pre-agent-turn" ||
    type === "pre-agent-turn-stop" || type === "post-tool-call";
  if (blocked && canBlock) return answerJson({ decision: "deny", reason });
  // AfterTool: a deny replaces the tool's result with "Tool result blocked: <reason>".
  if (output && type === "post-tool-call") {
    return answerJson({ decision: "deny", reason: output.text });
  }
  const specific: Payload = {};
  if (input && type === "pre-tool-call") specific.tool_input = input;
  if (
    context && (type === "pre-session" || type === "pre-agent-turn" || type === "post-tool-call")
  ) {
    specific.additionalContext = context;
  }
  return Object.keys(specific).length > 0
    ? answerJson({ hookSpecificOutput: specific })
    : { exitCode: 0, stdout: "", stderr: "" };
}

function cursorAnswer(call: AgentCall, type: EventType | undefined, parts: Parts): AgentAnswer {
  const { blocked, reason, context, input, output } = parts;
  if (blocked) {
    if (type === "pre-tool-call" || type === "pre-subagent") {
      return answerJson({ permission: "deny", user_message: reason, agent_message: reason });
    }
    if (type === "pre-agent-turn") return answerJson({ continue: false, user_message: reason });
    // stop / subagentStop: the reason is submitted as the next user message.
    if (type === "pre-agent-turn-stop" || type === "post-subagent") {
      return answerJson({ followup_message: reason });
    }
  }
  const out: Payload = {};
  const lines: string[] = [];
  if (input && call.agentEvent === "preToolUse") out.updated_input = input;
  else if (input && type === "pre-tool-call") {
    const text = rewriteRefused(call, parts);
    return answerJson({ permission: "deny", user_message: text, agent_message: text });
  } else if (input) lines.push(...uncarried(call, { ...parts, output: null }));
  if (output) {
    // Cursor replaces the output of MCP tools only.
    const mcp = call.agentEvent === "postToolUse" &&
      String(call.event?.tool_name).startsWith("MCP");
    if (mcp) out.updated_mcp_tool_output = output.value;
    else lines.push(...uncarried(call, { ...parts, input: null }));
  }
  if (context && (type === "pre-session" || type === "post-tool-call")) {
    out.additional_context = context;
  }
  const answer = Object.keys(out).length > 0 ? answerJson(out) : allowAnswer(call);
  return withNotices(call, answer, lines);
}

function copilotAnswer(call: AgentCall, type: EventType | undefined, parts: Parts): AgentAnswer {
  const { blocked, reason, context, input, output } = parts;
  if (blocked) {
    if (type === "pre-tool-call") {
      return answerJson({ permissionDecision: "deny", permissionDecisionReason: reason });
    }
    if (type === "pre-agent-turn-stop" || type === "post-subagent") {
      return answerJson({ decision: "block", reason });
    }
  }
  const out: Payload = {};
  if (input && type === "pre-tool-call") out.modifiedArgs = input;
  if (output && type === "post-tool-call") {
    out.modifiedResult = { resultType: "success", textResultForLlm: output.text };
  }
  if (
    context &&
    (type === "pre-session" || type === "post-tool-call" || type === "post-tool-call-failure" ||
      type === "pre-subagent")
  ) {
    out.additionalContext = context;
  }
  return Object.keys(out).length > 0 ? answerJson(out) : allowAnswer(call);
}
