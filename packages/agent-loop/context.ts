/**
 * Seed 001's context objects in TypeScript: {@linkcode HookContext} (the run's
 * persistent state), {@linkcode LLMRequest} (a per-call copy: what a hook does
 * to it never reaches `messages`), {@linkcode ToolCallInfo} and
 * {@linkcode ToolResultInfo}.
 *
 * @module
 */
import type { InjectItem } from "../core/schema/output.ts";
import type { Message, Step, ToolSchema } from "./types.ts";

/** Counters of a run. */
export interface RunTracker {
  /** Tokens sent and received so far. */
  totalTokens: number;
  /** Tool calls made so far. */
  toolCallsCount: number;
  /** Model calls made so far. */
  llmCallsCount: number;
  /** Times a stop gate sent the agent back to work. */
  stopCount: number;
}

/** What {@linkcode HookContext} is built from. */
export interface HookContextInit {
  /** This run's id. */
  runId: string;
  /** The session the run belongs to. */
  sessionId: string;
  /** The run's message list; kept by reference (persistent changes land here). */
  messages: Message[];
  /** Every tool the agent has. @default [] */
  tools?: ToolSchema[];
  /** The model's name. @default "" */
  model?: string;
  /** The agent's work dir, handed to sandboxed hooks. */
  workDir?: string;
}

/** The say over tools of in-process code: more than any sandboxed hook level. */
export const OPERATOR = -1;

/**
 * The run's context, shared by every hook. Change `messages` for changes that
 * persist across iterations; `store` carries data between hooks (and to and
 * from sandboxed hooks as §3's `store`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { HookContext } from "./context.ts";
 * const ctx = new HookContext({ runId: "r", sessionId: "s", messages: [{ role: "user", content: "hi" }] });
 * ctx.appendToSystemPrompt("Be brief.");
 * assert.equal(ctx.getSystemMessage()?.content, "Be brief.");
 * ```
 */
export class HookContext {
  /** This run's id. */
  readonly runId: string;
  /** The session the run belongs to. */
  readonly sessionId: string;
  /** The canonical message history: changes persist across iterations. */
  messages: Message[];
  /** Every tool the agent has (disabled ones included). */
  readonly tools: readonly ToolSchema[];
  /** The model's name. */
  readonly model: string;
  /** The agent's work dir. */
  readonly workDir: string | undefined;
  /** The current loop iteration (1 for the first model call). */
  iteration = 0;
  /** Every step so far. */
  readonly steps: Step[] = [];
  /** Counters. */
  readonly tracker: RunTracker = {
    totalTokens: 0,
    toolCallsCount: 0,
    llmCallsCount: 0,
    stopCount: 0,
  };
  /** Data shared between hooks within the run. */
  store: Record<string, unknown> = {};
  /** Temporary messages for the next model call only (from hooks that fired between calls). */
  readonly pendingInjections: InjectItem[] = [];
  /** Disabled tools, each with the authority of whoever disabled it (lower has more say). */
  #disabled = new Map<string, number>();

  /** A context for one run. */
  constructor(init: HookContextInit) {
    this.runId = init.runId;
    this.sessionId = init.sessionId;
    this.messages = init.messages;
    this.tools = init.tools ?? [];
    this.model = init.model ?? "";
    this.workDir = init.workDir;
  }

  /** The system message, if there is one. */
  getSystemMessage(): Message | undefined {
    return this.messages.find((m) => m.role === "system");
  }

  /** Sets or replaces the system prompt. */
  setSystemPrompt(content: string): void {
    const message = this.getSystemMessage();
    if (message) message.content = content;
    else this.messages.unshift({ role: "system", content });
  }

  /** Appends to the system prompt (or sets it). */
  appendToSystemPrompt(content: string, separator = "\n\n"): void {
    const message = this.getSystemMessage();
    if (message) message.content = `${message.content}${separator}${content}`;
    else this.setSystemPrompt(content);
  }

  /** Prepends to the system prompt (or sets it). */
  prependToSystemPrompt(content: string, separator = "\n\n"): void {
    const message = this.getSystemMessage();
    if (message) message.content = `${content}${separator}${message.content}`;
    else this.setSystemPrompt(content);
  }

  /** The most recent user message. */
  getLastUserMessage(): Message | undefined {
    return this.messages.findLast((m) => m.role === "user");
  }

  /** Every message with `role`. */
  getMessagesByRole(role: string): Message[] {
    return this.messages.filter((m) => m.role === role);
  }

  /** The last step, optionally of one type. */
  getLastStep(type?: Step["type"]): Step | undefined {
    return this.steps.findLast((s) => type === undefined || s.type === type);
  }

  /** The last model answer. */
  getLastAssistantStep(): Step | undefined {
    return this.getLastStep("assistant");
  }

  /** The last tool result. */
  getLastToolStep(): Step | undefined {
    return this.getLastStep("tool");
  }

  /** Tool steps, optionally of one tool. */
  getToolSteps(toolName?: string): Step[] {
    return this.steps.filter((s) => s.type === "tool" && (!toolName || s.name === toolName));
  }

  /** The non-empty results of tool steps, optionally of one tool. */
  getToolResults(toolName?: string): string[] {
    return this.getToolSteps(toolName).map((s) => s.content).filter((c) => c !== "");
  }

  /**
   * Disables a tool for later model calls. `authority` says who disables it
   * (0 and above: a sandboxed hook level, see `toolAuthority`; the default,
   * {@linkcode OPERATOR}, is in-process code); the strongest disable stands.
   */
  disableTool(name: string, authority: number = OPERATOR): void {
    const held = this.#disabled.get(name);
    this.#disabled.set(name, held === undefined ? authority : Math.min(held, authority));
  }

  /**
   * Re-enables a disabled tool, unless someone with more say disabled it (a
   * sandboxed hook never re-enables what in-process code or a higher level
   * disabled). Returns false when the tool stays disabled.
   */
  enableTool(name: string, authority: number = OPERATOR): boolean {
    const held = this.#disabled.get(name);
    if (held !== undefined && held < authority) return false;
    this.#disabled.delete(name);
    return true;
  }

  /** Disables every tool (in-process code's say). */
  disableAllTools(): void {
    for (const tool of this.tools) this.disableTool(tool.function.name);
  }

  /** Enables every tool (in-process code's say). */
  enableAllTools(): void {
    this.#disabled.clear();
  }

  /** True when `name` is disabled. */
  isToolDisabled(name: string): boolean {
    return this.#disabled.has(name);
  }

  /** The schemas of the tools not disabled, or null when the agent has none. */
  getActiveToolSchemas(): ToolSchema[] | null {
    if (this.tools.length === 0) return null;
    return this.tools.filter((t) => !this.#disabled.has(t.function.name));
  }

  /** Tokens sent and received so far. */
  get totalTokens(): number {
    return this.tracker.totalTokens;
  }

  /** Tool calls made so far. */
  get toolCallsCount(): number {
    return this.tracker.toolCallsCount;
  }
}

/**
 * The request about to be sent to the model: a deep copy, so changes to
 * `messages` or `tools` are for this call only and never reach
 * {@linkcode HookContext.messages}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { LLMRequest } from "./context.ts";
 * const history = [{ role: "user", content: "hi" }];
 * const request = new LLMRequest(history, null);
 * request.injectMessage("It is Monday.", "system");
 * assert.equal(request.messages.length, 2);
 * assert.equal(history.length, 1);
 * ```
 */
export class LLMRequest {
  /** The messages to send (a copy). */
  messages: Message[];
  /** The tools offered (a copy), or null for none. */
  tools: ToolSchema[] | null;

  /** Copies `messages` and `tools` for one call. */
  constructor(messages: readonly Message[], tools: readonly ToolSchema[] | null) {
    this.messages = structuredClone([...messages]);
    this.tools = tools ? structuredClone([...tools]) : null;
  }

  /** Injects a temporary message, by default just before the last user message. */
  injectMessage(content: string, role = "user", options: { beforeLastUser?: boolean } = {}): void {
    const message: Message = { role, content };
    const at = options.beforeLastUser === false
      ? -1
      : this.messages.findLastIndex((m) => m.role === "user");
    if (at >= 0) this.messages.splice(at, 0, message);
    else this.messages.push(message);
  }

  /** Appends to the system prompt of this call only (or adds one). */
  injectSystemContext(content: string): void {
    const system = this.messages.find((m) => m.role === "system");
    if (system) system.content = `${system.content}\n\n${content}`;
    else this.messages.unshift({ role: "system", content });
  }
}

/** A tool call about to run; hooks may change its arguments in place. */
export class ToolCallInfo {
  /** The call's id. */
  readonly id: string;
  /** The tool's name. */
  readonly name: string;
  /** The arguments the tool will get. */
  arguments: Record<string, unknown>;

  /** A call of tool `name` with `args` (kept by reference). */
  constructor(id: string, name: string, args: Record<string, unknown>) {
    this.id = id;
    this.name = name;
    this.arguments = args;
  }

  /** Sets one argument. */
  updateArgument(key: string, value: unknown): void {
    this.arguments[key] = value;
  }
}

/** A tool's result; hooks may replace `content` before the model sees it. */
export interface ToolResultInfo {
  /** The call's id. */
  toolCallId: string;
  /** The tool's name. */
  toolName: string;
  /** What the model will see. */
  content: string;
  /** The tool succeeded. */
  success: boolean;
  /** Seconds the tool took, when measured. */
  duration: number | null;
  /** The error's message, when it failed. */
  error: string | null;
}
