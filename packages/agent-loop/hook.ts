/**
 * {@linkcode AgentHook} (seed 001's callbacks, seed 002's blocking outcome,
 * seed 004's numeric priority and event set) and {@linkcode HookManager},
 * which runs hooks in priority order and isolates their errors.
 *
 * @module
 */
import type { HookContext, LLMRequest, ToolCallInfo, ToolResultInfo } from "./context.ts";
import type { ErrorInfo, HookOutcome, RunOutput, Step } from "./types.ts";

/** What a callback that may veto returns: an outcome, `false` (seed 002: block), or nothing. */
export type Verdict = HookOutcome | false | void | undefined;
/** A value, or a promise of it. */
export type MaybePromise<T> = T | Promise<T>;

/** A stop the agent is about to make (the §1 `pre-agent-turn-stop` moment). */
export interface StopInfo {
  /** The answer the agent would stop with. */
  lastMessage: string;
  /** How many times a stop gate already sent the agent back this run. */
  stopCount: number;
}

/** A subagent about to start or just finished. */
export interface SubagentInfo {
  /** The subagent's name. */
  name: string;
  /** What it was asked to do. */
  task: string;
}

/** A context compaction. */
export interface CompactInfo {
  /** Messages before compaction. */
  messageCount: number;
  /** The summary that replaced them (after compaction). */
  summary?: string;
  /** How many messages the summary replaced (after compaction). */
  compactedCount?: number;
}

/**
 * A hook into the agent loop. Every callback is optional. Callbacks that
 * return a {@linkcode Verdict} may veto what is about to happen; the first
 * veto stops later hooks.
 */
export interface AgentHook {
  /** A name for logs and errors. @default "anonymous" */
  name?: string;
  /**
   * Order among in-process hooks: LOWER runs first (seed 004: 0–50 security,
   * 51–100 validation, 101–500 business, 501–1000 logging). Ties keep the
   * order of registration. @default 100
   */
  priority?: number;
  /** `closed`: a throwing callback vetoes (where vetoes apply). @default "open" */
  errorMode?: "open" | "closed";
  /** Session start (§1 `pre-session`). */
  onSessionStart?(ctx: HookContext): MaybePromise<Verdict>;
  /** Session end (§1 `post-session`). */
  onSessionEnd?(ctx: HookContext, reason: string): MaybePromise<void>;
  /** Run start: the agent got the user's input (§1 `pre-agent-turn`; seed 004 PreCall). */
  onRunStart?(ctx: HookContext): MaybePromise<Verdict>;
  /** Before each model call; change `request` for this call only (§1 `pre-llm-call`; PreReasoning). */
  onLlmStart?(ctx: HookContext, request: LLMRequest): MaybePromise<Verdict>;
  /** A streamed piece of the model's answer (seed 004 ReasoningChunk; notification only). */
  onLlmChunk?(ctx: HookContext, chunk: string): MaybePromise<void>;
  /** After each model call; `step.content` may be replaced (§1 `post-llm-call`; PostReasoning). */
  onLlmEnd?(ctx: HookContext, step: Step): MaybePromise<Verdict>;
  /** Before a tool runs; `toolCall.arguments` may be changed (§1 `pre-tool-call`; PreActing). */
  onToolStart?(ctx: HookContext, toolCall: ToolCallInfo): MaybePromise<Verdict>;
  /** A streamed piece of a tool's output (seed 004 ActingChunk; notification only). */
  onToolChunk?(ctx: HookContext, toolCall: ToolCallInfo, chunk: string): MaybePromise<void>;
  /**
   * After a tool ran or failed; `result.content` may be replaced; a veto
   * withholds the result (§1 `post-tool-call` / `post-tool-call-failure`; PostActing).
   */
  onToolEnd?(
    ctx: HookContext,
    toolCall: ToolCallInfo,
    result: ToolResultInfo,
  ): MaybePromise<Verdict>;
  /** The agent is about to stop; a veto sends it back with the reason (§1 `pre-agent-turn-stop`). */
  onStop?(ctx: HookContext, stop: StopInfo): MaybePromise<Verdict>;
  /** The agent stopped (§1 `post-agent-turn-stop`). */
  onStopped?(ctx: HookContext, stop: StopInfo): MaybePromise<void>;
  /** A subagent is about to start (§1 `pre-subagent`). */
  onSubagentStart?(ctx: HookContext, subagent: SubagentInfo): MaybePromise<Verdict>;
  /** A subagent finished (§1 `post-subagent`). */
  onSubagentEnd?(ctx: HookContext, subagent: SubagentInfo, result: string): MaybePromise<void>;
  /** The context is about to be compacted; a veto skips it (§1 `pre-context-compact`). */
  onCompactStart?(ctx: HookContext, info: CompactInfo): MaybePromise<Verdict>;
  /** The context was compacted (§1 `post-context-compact`). */
  onCompactEnd?(ctx: HookContext, info: CompactInfo): MaybePromise<void>;
  /** Before the run's output is returned; may return a changed output (§1 `post-agent-turn`; PostCall). */
  onRunEnd?(ctx: HookContext, output: RunOutput): MaybePromise<RunOutput | void>;
  /** An error in the model call, a tool or the loop (a failed model call is §1 `post-llm-call-failure`). */
  onError?(ctx: HookContext, error: unknown, info: ErrorInfo): MaybePromise<void>;
}

type Vetoing =
  | "onSessionStart"
  | "onRunStart"
  | "onLlmStart"
  | "onLlmEnd"
  | "onToolStart"
  | "onToolEnd"
  | "onStop"
  | "onSubagentStart"
  | "onCompactStart";

/** Options of {@linkcode HookManager}. */
export interface HookManagerOptions {
  /** Receives each hook failure. @default console.warn */
  onHookError?: (hook: string, callback: string, error: unknown) => void;
}

const ALLOW: HookOutcome = Object.freeze({ blocked: false, reason: "" });

/**
 * Runs {@linkcode AgentHook}s in priority order (lower first) with every
 * hook's errors isolated: a throwing hook is reported and skipped over, unless
 * it says `errorMode: "closed"`, which turns its failure into a veto.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { HookContext, ToolCallInfo } from "./context.ts";
 * import { HookManager } from "./hook.ts";
 * const manager = new HookManager([{
 *   onToolStart: (_ctx, call) => call.name === "bash" ? { blocked: true, reason: "no shell" } : undefined,
 * }]);
 * const ctx = new HookContext({ runId: "r", sessionId: "s", messages: [] });
 * const outcome = await manager.onToolStart(ctx, new ToolCallInfo("1", "bash", { command: "ls" }));
 * assert.deepEqual(outcome, { blocked: true, reason: "no shell" });
 * ```
 */
export class HookManager {
  #hooks: { hook: AgentHook; priority: number; order: number }[] = [];
  #onHookError: NonNullable<HookManagerOptions["onHookError"]>;

  /** A manager running `hooks`. */
  constructor(hooks: readonly AgentHook[] = [], options: HookManagerOptions = {}) {
    this.#onHookError = options.onHookError ??
      ((hook, callback, error) => console.warn(`hook ${hook}.${callback} failed:`, error));
    for (const hook of hooks) this.register(hook);
  }

  /** Adds a hook; `priority` overrides the hook's own. */
  register(hook: AgentHook, priority = hook.priority ?? 100): void {
    if (!Number.isFinite(priority)) {
      throw new TypeError(`priority must be a number, got ${priority}`);
    }
    this.#hooks.push({ hook, priority, order: this.#hooks.length });
    this.#hooks.sort((a, b) => a.priority - b.priority || a.order - b.order);
  }

  /** The hooks in the order they run. */
  get hooks(): AgentHook[] {
    return this.#hooks.map((h) => h.hook);
  }

  /** Session start; a veto refuses the session. */
  onSessionStart(ctx: HookContext): Promise<HookOutcome> {
    return this.#veto("onSessionStart", (h) => h.onSessionStart?.(ctx));
  }

  /** Session end. */
  onSessionEnd(ctx: HookContext, reason: string): Promise<void> {
    return this.#notify("onSessionEnd", (h) => h.onSessionEnd?.(ctx, reason));
  }

  /** Run start; a veto ends the run before the model is called. */
  onRunStart(ctx: HookContext): Promise<HookOutcome> {
    return this.#veto("onRunStart", (h) => h.onRunStart?.(ctx));
  }

  /** Before a model call; a veto skips the call. */
  onLlmStart(ctx: HookContext, request: LLMRequest): Promise<HookOutcome> {
    return this.#veto("onLlmStart", (h) => h.onLlmStart?.(ctx, request));
  }

  /** A streamed piece of the model's answer. */
  onLlmChunk(ctx: HookContext, chunk: string): Promise<void> {
    return this.#notify("onLlmChunk", (h) => h.onLlmChunk?.(ctx, chunk));
  }

  /** After a model call; a veto withholds the answer. */
  onLlmEnd(ctx: HookContext, step: Step): Promise<HookOutcome> {
    return this.#veto("onLlmEnd", (h) => h.onLlmEnd?.(ctx, step));
  }

  /** Before a tool runs; a veto blocks the call (seed 002's `HookOutcome`). */
  onToolStart(ctx: HookContext, toolCall: ToolCallInfo): Promise<HookOutcome> {
    return this.#veto("onToolStart", (h) => h.onToolStart?.(ctx, toolCall));
  }

  /** A streamed piece of a tool's output. */
  onToolChunk(ctx: HookContext, toolCall: ToolCallInfo, chunk: string): Promise<void> {
    return this.#notify("onToolChunk", (h) => h.onToolChunk?.(ctx, toolCall, chunk));
  }

  /** After a tool; a veto withholds its result from the model. */
  onToolEnd(
    ctx: HookContext,
    toolCall: ToolCallInfo,
    result: ToolResultInfo,
  ): Promise<HookOutcome> {
    return this.#veto("onToolEnd", (h) => h.onToolEnd?.(ctx, toolCall, result));
  }

  /** The stop gate; a veto sends the agent back to work with the reason. */
  onStop(ctx: HookContext, stop: StopInfo): Promise<HookOutcome> {
    return this.#veto("onStop", (h) => h.onStop?.(ctx, stop));
  }

  /** The agent stopped. */
  onStopped(ctx: HookContext, stop: StopInfo): Promise<void> {
    return this.#notify("onStopped", (h) => h.onStopped?.(ctx, stop));
  }

  /** A subagent is about to start; a veto refuses it. */
  onSubagentStart(ctx: HookContext, subagent: SubagentInfo): Promise<HookOutcome> {
    return this.#veto("onSubagentStart", (h) => h.onSubagentStart?.(ctx, subagent));
  }

  /** A subagent finished. */
  onSubagentEnd(ctx: HookContext, subagent: SubagentInfo, result: string): Promise<void> {
    return this.#notify("onSubagentEnd", (h) => h.onSubagentEnd?.(ctx, subagent, result));
  }

  /** Before compaction; a veto skips it. */
  onCompactStart(ctx: HookContext, info: CompactInfo): Promise<HookOutcome> {
    return this.#veto("onCompactStart", (h) => h.onCompactStart?.(ctx, info));
  }

  /** After compaction. */
  onCompactEnd(ctx: HookContext, info: CompactInfo): Promise<void> {
    return this.#notify("onCompactEnd", (h) => h.onCompactEnd?.(ctx, info));
  }

  /** Passes the output through every hook's `onRunEnd`; a failing hook leaves it as it was. */
  async onRunEnd(ctx: HookContext, output: RunOutput): Promise<RunOutput> {
    let current = output;
    for (const { hook } of this.#hooks) {
      if (!hook.onRunEnd) continue;
      try {
        current = (await hook.onRunEnd(ctx, current)) ?? current;
      } catch (error) {
        this.#onHookError(hook.name ?? "anonymous", "onRunEnd", error);
      }
    }
    return current;
  }

  /** Tells every hook about an error. */
  onError(ctx: HookContext, error: unknown, info: ErrorInfo): Promise<void> {
    return this.#notify("onError", (h) => h.onError?.(ctx, error, info));
  }

  async #veto(callback: Vetoing, call: (hook: AgentHook) => MaybePromise<Verdict>) {
    for (const { hook } of this.#hooks) {
      if (!hook[callback]) continue;
      try {
        const verdict = await call(hook);
        if (verdict === false) {
          return { blocked: true, reason: `blocked by ${hook.name ?? "a hook"}` };
        }
        if (verdict?.blocked) return { blocked: true, reason: verdict.reason };
      } catch (error) {
        const name = hook.name ?? "anonymous";
        this.#onHookError(name, callback, error);
        if (hook.errorMode === "closed") {
          return { blocked: true, reason: `hook ${name} failed: ${messageOf(error)}` };
        }
      }
    }
    return ALLOW;
  }

  async #notify(callback: keyof AgentHook, call: (hook: AgentHook) => MaybePromise<void>) {
    for (const { hook } of this.#hooks) {
      if (!hook[callback]) continue;
      try {
        await call(hook);
      } catch (error) {
        this.#onHookError(hook.name ?? "anonymous", callback, error);
      }
    }
  }
}

/** An error's message, whatever was thrown. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
