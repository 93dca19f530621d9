/**
 * Sandboxed hook folders (SPEC §2) as one {@linkcode AgentHook}: every
 * callback dispatches the §1 event of the same moment through an
 * {@linkcode Executor} and applies the result as the seeds describe — a block
 * vetoes, `modified_input` rewrites the prompt, the request's messages or the
 * tool arguments, `modified_output` replaces the model's answer or the tool's
 * result, injections go to `messages` (persistent) or only to the next model
 * request, tools are disabled for later calls and `store` is shared.
 *
 * @module
 */
import { z } from "zod";
import { toolAuthority } from "../core/dispatch/dispatch.ts";
import type { DispatchResult } from "../core/dispatch/result.ts";
import { readStdout } from "../core/schema/output.ts";
import type { Executor } from "../core/executor.ts";
import type { EventType } from "../core/schema/event_types.ts";
import type { HookContext, LLMRequest } from "./context.ts";
import type { AgentHook, Verdict } from "./hook.ts";
import type { Message, Step, ToolCall } from "./types.ts";

/** Options of {@linkcode sandboxHooks}. */
export interface SandboxHooksOptions {
  /** Its place among in-process hooks (lower runs first). @default 100 */
  priority?: number;
  /** Tenant the events belong to. @default "default" */
  tenantId?: string;
  /** `closed`: when the executor itself fails (not a hook), veto. @default "open" */
  errorMode?: "open" | "closed";
  /** Receives every dispatch's result, for logs. */
  onResult?: (eventType: EventType, result: DispatchResult) => void;
}

const toolCalls = z.array(z.object({
  id: z.string(),
  name: z.string(),
  arguments: z.record(z.string(), z.unknown()),
}));

/**
 * The hook folders an executor serves, as an {@linkcode AgentHook}.
 *
 * @example
 * ```ts ignore
 * const manager = new HookManager([sandboxHooks(createExecutor({ projectDir: ".agents/hooks" }))]);
 * ```
 */
export function sandboxHooks(executor: Executor, options: SandboxHooksOptions = {}): AgentHook {
  const fire = async (
    ctx: HookContext,
    type: EventType,
    fields: Record<string, unknown>,
    request?: LLMRequest,
  ) => {
    const result = await executor.dispatch(eventOf(ctx, type, fields), {
      tenantId: options.tenantId ?? "default",
    });
    options.onResult?.(type, result);
    applyShared(ctx, result, request);
    return result;
  };
  const verdict = (r: DispatchResult): Verdict =>
    r.decision === "block"
      ? { blocked: true, reason: r.reason ?? `blocked by ${r.blocked_by}` }
      : undefined;
  return {
    name: "sandbox",
    priority: options.priority ?? 100,
    errorMode: options.errorMode ?? "open",
    async onSessionStart(ctx) {
      return verdict(await fire(ctx, "pre-session", { source: "startup" }));
    },
    async onSessionEnd(ctx, reason) {
      await fire(ctx, "post-session", { reason });
    },
    async onRunStart(ctx) {
      const user = ctx.getLastUserMessage();
      const prompt = typeof user?.content === "string"
        ? user.content
        : JSON.stringify(user?.content ?? "");
      const r = await fire(ctx, "pre-agent-turn", { prompt });
      if (user && typeof r.modified_input === "string") user.content = r.modified_input;
      return verdict(r);
    },
    async onLlmStart(ctx, request) {
      const r = await fire(ctx, "pre-llm-call", llmFields(ctx, request.messages, request), request);
      if (Array.isArray(r.modified_input)) {
        if (!r.modified_input.every((m) => isObject(m) && typeof m.role === "string")) {
          throw new TypeError(
            "modified_input of pre-llm-call must be a list of {role, content} messages",
          );
        }
        request.messages = r.modified_input as Message[];
      }
      return verdict(r);
    },
    async onLlmEnd(ctx, step) {
      const r = await fire(ctx, "post-llm-call", {
        ...llmFields(ctx, ctx.messages),
        response: assistantMessage(step),
        ...(step.usage ? { usage: step.usage } : {}),
      });
      replaceAnswer(step, r.modified_output);
      return verdict(r);
    },
    async onToolStart(ctx, call) {
      const r = await fire(ctx, "pre-tool-call", toolFields(call));
      if (isObject(r.modified_input)) call.arguments = r.modified_input;
      return verdict(r);
    },
    async onToolEnd(ctx, call, result) {
      const r = result.success
        ? await fire(ctx, "post-tool-call", { ...toolFields(call), tool_output: result.content })
        : await fire(ctx, "post-tool-call-failure", {
          ...toolFields(call),
          error: result.error ?? "",
        });
      if (r.modified_output !== null && r.modified_output !== undefined) {
        result.content = typeof r.modified_output === "string"
          ? r.modified_output
          : JSON.stringify(r.modified_output);
      }
      return verdict(r);
    },
    async onStop(ctx, stop) {
      const fields = { last_message: stop.lastMessage, stop_count: stop.stopCount };
      return verdict(await fire(ctx, "pre-agent-turn-stop", fields));
    },
    async onStopped(ctx, stop) {
      await fire(ctx, "post-agent-turn-stop", { last_message: stop.lastMessage });
    },
    async onSubagentStart(ctx, sub) {
      return verdict(await fire(ctx, "pre-subagent", { subagent_name: sub.name, task: sub.task }));
    },
    async onSubagentEnd(ctx, sub, result) {
      await fire(ctx, "post-subagent", { subagent_name: sub.name, task: sub.task, result });
    },
    async onCompactStart(ctx, info) {
      return verdict(await fire(ctx, "pre-context-compact", { message_count: info.messageCount }));
    },
    async onCompactEnd(ctx, info) {
      await fire(ctx, "post-context-compact", {
        summary: info.summary ?? "",
        compacted_count: info.compactedCount ?? 0,
      });
    },
    async onRunEnd(ctx, output) {
      const r = await fire(ctx, "post-agent-turn", { response: output.content });
      return r.decision === "block"
        ? {
          ...output,
          terminationReason: "blocked",
          reason: r.reason ?? `blocked by ${r.blocked_by}`,
        }
        : output;
    },
    async onError(ctx, error, info) {
      if (info.phase !== "llm") return;
      await fire(ctx, "post-llm-call-failure", {
        ...llmFields(ctx, ctx.messages),
        error: error instanceof Error ? error.message : String(error),
      });
    },
  };
}

function eventOf(ctx: HookContext, type: EventType, fields: Record<string, unknown>) {
  return {
    event_type: type,
    timestamp: new Date().toISOString(),
    session_id: ctx.sessionId,
    turn_id: ctx.runId,
    ...(ctx.workDir ? { work_dir: ctx.workDir } : {}),
    store: ctx.store,
    ...fields,
  };
}

function llmFields(ctx: HookContext, messages: Message[], request?: LLMRequest) {
  return {
    messages,
    ...(request?.tools ? { tools: request.tools } : {}),
    ...(ctx.model ? { model: ctx.model } : {}),
    iteration: ctx.iteration,
  };
}

function toolFields(call: { id: string; name: string; arguments: Record<string, unknown> }) {
  return { tool_name: call.name, tool_input: call.arguments, tool_use_id: call.id };
}

/** The §3 effects every event shares: store, tools, injections. */
function applyShared(ctx: HookContext, result: DispatchResult, request?: LLMRequest): void {
  // Hook output is untrusted: keys are defined, never assigned (no `__proto__` setter).
  for (const [key, value] of Object.entries(result.store)) {
    Object.defineProperty(ctx.store, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  const say = toolSay(result);
  for (const name of result.disable_tools) ctx.disableTool(name, say.disabled.get(name) ?? 0);
  for (const name of result.enable_tools) ctx.enableTool(name, say.enabled.get(name) ?? 2);
  const toolsChanged = result.disable_tools.length > 0 || result.enable_tools.length > 0;
  if (request?.tools && toolsChanged) {
    const active = new Set(ctx.getActiveToolSchemas()?.map((t) => t.function.name));
    request.tools = ctx.tools.filter((t) => active.has(t.function.name)).map((t) =>
      structuredClone(t)
    );
  }
  for (const item of result.inject) {
    const message = { role: item.role, content: item.content };
    if (item.persistent) {
      ctx.messages.push(message);
      request?.messages.push({ ...message });
    } else if (request) request.injectMessage(item.content, item.role);
    else ctx.pendingInjections.push(item);
  }
}

/**
 * Who among the result's hooks disabled and enabled each tool, as the
 * authority of their level (`toolAuthority`): the strongest disable and the
 * weakest enable, read back from the hooks' own output.
 */
function toolSay(result: DispatchResult) {
  const disabled = new Map<string, number>();
  const enabled = new Map<string, number>();
  for (const record of result.hooks) {
    if (record.outcome !== "ok" && record.outcome !== "block") continue;
    const reading = readStdout(record.stdout);
    if (reading.kind !== "control") continue;
    const authority = toolAuthority(record.level);
    for (const tool of reading.control.disable_tools ?? []) {
      disabled.set(tool, Math.min(disabled.get(tool) ?? authority, authority));
    }
    for (const tool of reading.control.enable_tools ?? []) {
      enabled.set(tool, Math.max(enabled.get(tool) ?? authority, authority));
    }
  }
  return { disabled, enabled };
}

function assistantMessage(step: Step) {
  return { role: "assistant", content: step.content, tool_calls: step.toolCalls };
}

/** `modified_output` of post-llm-call: a string replaces the text; an object its fields. */
function replaceAnswer(step: Step, replacement: unknown): void {
  if (typeof replacement === "string") step.content = replacement;
  else if (isObject(replacement)) {
    if (typeof replacement.content === "string") step.content = replacement.content;
    const calls = toolCalls.safeParse(replacement.tool_calls);
    if (calls.success) step.toolCalls = calls.data as ToolCall[];
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
