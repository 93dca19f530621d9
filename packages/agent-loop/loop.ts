/**
 * {@linkcode AgentExecutor}: an agent loop (seed 001's `AgentExecutor`) that
 * calls a {@linkcode HookManager} at every moment and follows seed 003's
 * flowchart for prompt hooks: after_user_input → (planning round) → agent
 * rounds with before_each_agent / before_first_agent / after_tool_call, each
 * removed by the seed's table. A stop gate that vetoes sends the agent back
 * with the reason, at most `maxStopContinues` times.
 *
 * @module
 */
import { HookContext, LLMRequest } from "./context.ts";
import { type AgentHook, HookManager, messageOf } from "./hook.ts";
import { type PromptHookInfo, PromptHookManager } from "./prompt_hooks.ts";
import { type AgentTool, callTool } from "./_tools.ts";
import type {
  HookOutcome,
  Message,
  PromptInjection,
  RunOutput,
  Step,
  TerminationReason,
  ToolCall,
  Usage,
} from "./types.ts";

export type { AgentTool, ToolRunContext } from "./_tools.ts";

/** What the model answered. */
export interface ModelAnswer {
  /** The answer's text. */
  content: string;
  /** Tools it wants to call (ignored when it was offered none). @default [] */
  toolCalls?: ToolCall[];
  /** Token counts. */
  usage?: Usage;
  /** The answer as it streamed, for chunk hooks. @default [] */
  chunks?: string[];
  /** Planning round only: false when the request needs no tools. @default true */
  needTools?: boolean;
}

/** Which kind of model call this is. */
export interface ModelCallInfo {
  /** `direct` (no tools at all), `planning` (no tools) or `agent` (with tools). */
  phase: "direct" | "planning" | "agent";
  /** The run's context. */
  ctx: HookContext;
}

/** The model the loop calls. */
export interface AgentModel {
  /** Its name, handed to hooks. @default "" */
  name?: string;
  /** Answers one request. */
  call(request: LLMRequest, info: ModelCallInfo): ModelAnswer | Promise<ModelAnswer>;
}

/** Context compaction. */
export interface CompactOptions {
  /** Compact when the messages outnumber this. */
  maxMessages: number;
  /** Recent messages kept as they are. @default 4 */
  keep?: number;
  /** Summarises the messages that are folded away. */
  summarize(messages: Message[]): string | Promise<string>;
}

/** Options of {@linkcode AgentExecutor}. */
export interface AgentExecutorOptions {
  /** The model. */
  model: AgentModel;
  /** The tools. @default [] */
  tools?: AgentTool[];
  /** The hooks (a manager, or hooks to put in a new one). @default [] */
  hooks?: HookManager | AgentHook[];
  /** Skill prompt hooks (seed 003). @default [] */
  promptHooks?: PromptHookInfo[];
  /** Offer tools at all (seed 003's `enable_tools`). @default true */
  enableTools?: boolean;
  /** Seed 003's planning prompt; null for no planning round. @default null */
  planningPrompt?: string | null;
  /** Seed 003's step prompt, injected for each agent round; null for none. @default null */
  stepPrompt?: string | null;
  /** Most model calls per run. @default 20 */
  maxIterations?: number;
  /** Most times a stop gate may send the agent back per run. @default 3 */
  maxStopContinues?: number;
  /** Context compaction; none when absent. */
  compact?: CompactOptions;
  /** Subagents tools may start by name. @default {} */
  subagents?: Record<string, AgentExecutor>;
}

/** Per-run options of {@linkcode AgentExecutor.run}. */
export interface RunOptions {
  /** The session. */
  sessionId: string;
  /** The run's id. @default a random UUID */
  runId?: string;
  /** The agent's work dir (sandboxed hooks see it as `work_dir`). */
  workDir?: string;
}

interface RunState {
  ctx: HookContext;
  prompts: PromptHookManager;
  persistent: PromptInjection[];
}

interface Ending {
  terminationReason: TerminationReason;
  content: string;
  reason: string | null;
}

type LlmResult = { step: Step; needTools: boolean } | { blocked: HookOutcome };

class ReportedError extends Error {}

/**
 * Runs an agent turn: user input → model calls and tools → answer, with hooks
 * at every step.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { AgentExecutor } from "./loop.ts";
 * const agent = new AgentExecutor({ model: { call: () => ({ content: "hello" }) } });
 * const out = await agent.run([{ role: "user", content: "hi" }], { sessionId: "s" });
 * assert.equal(out.content, "hello");
 * ```
 */
export class AgentExecutor {
  /** The hook manager every run uses. */
  readonly hooks: HookManager;
  #options: AgentExecutorOptions;
  #tools: Map<string, AgentTool>;

  /** An agent; throws `TypeError` naming a bad option. */
  constructor(options: AgentExecutorOptions) {
    this.#options = options;
    this.hooks = options.hooks instanceof HookManager
      ? options.hooks
      : new HookManager(options.hooks);
    this.#tools = new Map((options.tools ?? []).map((t) => [t.schema.function.name, t]));
    for (const key of ["maxIterations", "maxStopContinues"] as const) {
      const value = options[key];
      if (value !== undefined && !(Number.isInteger(value) && value >= 0)) {
        throw new TypeError(`${key} must be a non-negative integer, got ${value}`);
      }
    }
  }

  /** Fires the session-start hooks; a veto refuses the session. */
  startSession(options: RunOptions): Promise<HookOutcome> {
    return this.hooks.onSessionStart(this.#context([], options));
  }

  /** Fires the session-end hooks. */
  endSession(options: RunOptions, reason: string): Promise<void> {
    return this.hooks.onSessionEnd(this.#context([], options), reason);
  }

  /** Runs one turn over a copy of `messages`. */
  async run(messages: readonly Message[], options: RunOptions): Promise<RunOutput> {
    const ctx = this.#context(structuredClone([...messages]), options);
    const state: RunState = {
      ctx,
      prompts: new PromptHookManager(ctx.messages, this.#options.promptHooks ?? []),
      persistent: [],
    };
    let ending: Ending;
    try {
      ending = await this.#turn(state);
    } catch (error) {
      if (!(error instanceof ReportedError)) await this.hooks.onError(ctx, error, { phase: "run" });
      ending = { terminationReason: "error", content: "", reason: messageOf(error) };
    }
    const output: RunOutput = {
      ...ending,
      steps: ctx.steps,
      messages: ctx.messages,
      persistentPrompts: state.persistent,
    };
    return await this.hooks.onRunEnd(ctx, output);
  }

  #context(messages: Message[], options: RunOptions): HookContext {
    return new HookContext({
      runId: options.runId ?? crypto.randomUUID(),
      sessionId: options.sessionId,
      messages,
      tools: [...this.#tools.values()].map((t) => t.schema),
      model: this.#options.model.name ?? "",
      ...(options.workDir ? { workDir: options.workDir } : {}),
    });
  }

  async #turn(state: RunState): Promise<Ending> {
    const { ctx, prompts } = state;
    const start = await this.hooks.onRunStart(ctx);
    if (start.blocked) return blocked(start);
    state.persistent.push(...prompts.inject("after_user_input"));
    if (this.#options.enableTools === false || this.#tools.size === 0) {
      return await this.#direct(state);
    }
    const planning = this.#options.planningPrompt;
    if (planning) {
      state.persistent.push(...prompts.inject("before_planning"));
      const ref = prompts.injectPrompt(planning);
      let plan: LlmResult;
      try {
        plan = await this.#llm(state, "planning", false);
      } finally {
        prompts.removePrompt(ref);
        prompts.remove("before_planning");
      }
      if ("blocked" in plan) return blocked(plan.blocked);
      if (!plan.needTools) {
        const gate = await this.#gate(state, plan.step.content);
        if (gate !== "continue") return gate;
      }
    }
    return await this.#agentLoop(state);
  }

  async #direct(state: RunState): Promise<Ending> {
    while (true) {
      if (state.ctx.iteration >= this.#maxIterations) return ending("max_iterations", "", null);
      const answer = await this.#llm(state, "direct", false);
      if ("blocked" in answer) return blocked(answer.blocked);
      const gate = await this.#gate(state, answer.step.content);
      if (gate !== "continue") return gate;
    }
  }

  async #agentLoop(state: RunState): Promise<Ending> {
    const { ctx, prompts } = state;
    let first = true;
    try {
      while (true) {
        if (ctx.iteration >= this.#maxIterations) return ending("max_iterations", "", null);
        if (!first) await this.#maybeCompact(state);
        prompts.remove("before_each_agent");
        state.persistent.push(...prompts.inject("before_each_agent"));
        if (first) state.persistent.push(...prompts.inject("before_first_agent"));
        first = false;
        const stepPrompt = this.#options.stepPrompt;
        const ref = stepPrompt ? prompts.injectPrompt(stepPrompt) : null;
        let answer: LlmResult;
        try {
          answer = await this.#llm(state, "agent", true);
          if ("blocked" in answer) return blocked(answer.blocked);
          if (answer.step.toolCalls.length > 0) {
            await this.#runTools(state, answer.step.toolCalls);
            continue;
          }
        } finally {
          if (ref) prompts.removePrompt(ref);
        }
        const gate = await this.#gate(state, answer.step.content);
        if (gate !== "continue") return gate;
      }
    } finally {
      prompts.remove("before_first_agent");
      prompts.remove("after_tool_call");
    }
  }

  async #runTools(state: RunState, calls: ToolCall[]): Promise<void> {
    const subagent = (name: string, task: string) => this.#subagent(state.ctx, name, task);
    for (const call of calls) {
      await callTool(this.hooks, this.#tools, call, { ctx: state.ctx, subagent });
    }
    state.prompts.remove("after_tool_call");
    for (const call of calls) {
      state.persistent.push(...state.prompts.inject("after_tool_call", { toolName: call.name }));
    }
  }

  async #llm(
    state: RunState,
    phase: ModelCallInfo["phase"],
    useTools: boolean,
  ): Promise<LlmResult> {
    const { ctx } = state;
    ctx.iteration++;
    const request = new LLMRequest(ctx.messages, useTools ? ctx.getActiveToolSchemas() : null);
    for (const item of ctx.pendingInjections.splice(0)) {
      request.injectMessage(item.content, item.role);
    }
    const start = await this.hooks.onLlmStart(ctx, request);
    if (start.blocked) return { blocked: start };
    let answer: ModelAnswer;
    try {
      answer = await this.#options.model.call(request, { phase, ctx });
    } catch (error) {
      await this.hooks.onError(ctx, error, { phase: "llm" });
      throw new ReportedError(`model call failed: ${messageOf(error)}`);
    }
    for (const chunk of answer.chunks ?? []) await this.hooks.onLlmChunk(ctx, chunk);
    const step = stepOf(answer, useTools);
    ctx.tracker.llmCallsCount++;
    ctx.tracker.totalTokens += (step.usage?.promptTokens ?? 0) +
      (step.usage?.completionTokens ?? 0);
    ctx.steps.push(step);
    const end = await this.hooks.onLlmEnd(ctx, step);
    if (end.blocked) return { blocked: end };
    ctx.messages.push(assistantMessage(step));
    return { step, needTools: answer.needTools !== false };
  }

  /** The stop gate: "continue" when a hook sent the agent back, else how the run ends. */
  async #gate(state: RunState, content: string): Promise<Ending | "continue"> {
    const { ctx } = state;
    const stop = { lastMessage: content, stopCount: ctx.tracker.stopCount };
    const gate = await this.hooks.onStop(ctx, stop);
    if (gate.blocked && ctx.tracker.stopCount < (this.#options.maxStopContinues ?? 3)) {
      ctx.tracker.stopCount++;
      ctx.messages.push({ role: "user", content: gate.reason });
      return "continue";
    }
    await this.hooks.onStopped(ctx, stop);
    return gate.blocked
      ? ending("stop_budget", content, gate.reason)
      : ending("completed", content, null);
  }

  /**
   * Folds old messages into a summary. Prompt-hook messages the seed-003
   * table still manages are kept (their removal stays the table's), as are
   * the leading system messages and the last `keep` messages.
   */
  async #maybeCompact({ ctx, prompts }: RunState): Promise<void> {
    const compact = this.#options.compact;
    if (!compact || ctx.messages.length <= compact.maxMessages) return;
    const messageCount = ctx.messages.length;
    if ((await this.hooks.onCompactStart(ctx, { messageCount })).blocked) return;
    const head = ctx.messages.findIndex((m) => m.role !== "system");
    let cut = Math.max(head, ctx.messages.length - (compact.keep ?? 4));
    while (cut > head && ctx.messages[cut]?.role === "tool") cut--;
    if (head < 0 || cut <= head) return;
    const range = ctx.messages.slice(head, cut);
    const folded = range.filter((m) => !prompts.tracks(m));
    const summary = await compact.summarize(folded);
    ctx.messages.splice(head, range.length, {
      role: "user",
      content: `[summary of ${folded.length} earlier messages] ${summary}`,
    }, ...range.filter((m) => prompts.tracks(m)));
    await this.hooks.onCompactEnd(ctx, { messageCount, summary, compactedCount: folded.length });
  }

  async #subagent(ctx: HookContext, name: string, task: string): Promise<string> {
    const agent = this.#options.subagents?.[name];
    if (!agent) throw new Error(`no subagent named ${name}`);
    const info = { name, task };
    const gate = await this.hooks.onSubagentStart(ctx, info);
    if (gate.blocked) return `Blocked: ${gate.reason}`;
    const out = await agent.run([{ role: "user", content: task }], {
      sessionId: ctx.sessionId,
      runId: `${ctx.runId}/${name}`,
      ...(ctx.workDir ? { workDir: ctx.workDir } : {}),
    });
    await this.hooks.onSubagentEnd(ctx, info, out.content);
    return out.content;
  }

  get #maxIterations(): number {
    return this.#options.maxIterations ?? 20;
  }
}

function stepOf(answer: ModelAnswer, useTools: boolean): Step {
  return {
    type: "assistant",
    content: typeof answer.content === "string" ? answer.content : String(answer.content ?? ""),
    toolCalls: useTools ? [...(answer.toolCalls ?? [])] : [],
    ...(answer.usage ? { usage: answer.usage } : {}),
  };
}

function assistantMessage(step: Step): Message {
  if (step.toolCalls.length === 0) return { role: "assistant", content: step.content };
  return {
    role: "assistant",
    content: step.content,
    tool_calls: step.toolCalls.map((c) => ({
      id: c.id,
      type: "function",
      function: { name: c.name, arguments: JSON.stringify(c.arguments) },
    })),
  };
}

function blocked(outcome: HookOutcome): Ending {
  return ending("blocked", "", outcome.reason);
}

function ending(
  terminationReason: TerminationReason,
  content: string,
  reason: string | null,
): Ending {
  return { terminationReason, content, reason };
}
