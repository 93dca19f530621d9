/**
 * One tool call inside the agent loop: pre-tool-call hooks, the tool, then
 * post-tool-call (or post-tool-call-failure) hooks, and the result recorded
 * as a tool message.
 *
 * @module
 */
import { type HookContext, ToolCallInfo, type ToolResultInfo } from "./context.ts";
import { type HookManager, messageOf } from "./hook.ts";
import type { ToolCall, ToolSchema } from "./types.ts";

/** What a tool gets besides its arguments. */
export interface ToolRunContext {
  /** The run's context. */
  ctx: HookContext;
  /** Streams a piece of output (hooks see it as a tool chunk). */
  emit(chunk: string): Promise<void>;
  /** Runs a subagent with the subagent hooks around it; resolves to its answer. */
  subagent(name: string, task: string): Promise<string>;
}

/** A tool the agent can call. */
export interface AgentTool {
  /** How the model sees it. */
  schema: ToolSchema;
  /** Runs it; a string is the result, anything else is sent as JSON; a throw is a failure. */
  run(args: Record<string, unknown>, context: ToolRunContext): unknown;
}

/** Runs one call through the hooks and records it; the model sees `result.content`. */
export async function callTool(
  hooks: HookManager,
  tools: ReadonlyMap<string, AgentTool>,
  call: ToolCall,
  context: Omit<ToolRunContext, "emit">,
): Promise<ToolResultInfo> {
  const { ctx } = context;
  const info = new ToolCallInfo(call.id, call.name, structuredClone(call.arguments));
  const gate = await hooks.onToolStart(ctx, info);
  const result = gate.blocked
    ? blockedResult(info, gate.reason)
    : await runTool(hooks, tools, info, context);
  if (!gate.blocked) {
    ctx.tracker.toolCallsCount++;
    const after = await hooks.onToolEnd(ctx, info, result);
    if (after.blocked) result.content = `[tool result withheld by hooks: ${after.reason}]`;
  }
  ctx.steps.push({ type: "tool", name: info.name, content: result.content, toolCalls: [] });
  ctx.messages.push({
    role: "tool",
    tool_call_id: info.id,
    name: info.name,
    content: result.content,
  });
  return result;
}

async function runTool(
  hooks: HookManager,
  tools: ReadonlyMap<string, AgentTool>,
  info: ToolCallInfo,
  context: Omit<ToolRunContext, "emit">,
): Promise<ToolResultInfo> {
  const started = performance.now();
  const done = (content: string, error: string | null): ToolResultInfo => ({
    toolCallId: info.id,
    toolName: info.name,
    content,
    success: error === null,
    duration: (performance.now() - started) / 1000,
    error,
  });
  const tool = tools.get(info.name);
  if (!tool || context.ctx.isToolDisabled(info.name)) {
    const error = `tool ${info.name} is not available`;
    return done(`Error: ${error}`, error);
  }
  try {
    const emit = (chunk: string) => hooks.onToolChunk(context.ctx, info, chunk);
    const output = await tool.run(info.arguments, { ...context, emit });
    return done(typeof output === "string" ? output : JSON.stringify(output) ?? "", null);
  } catch (error) {
    await hooks.onError(context.ctx, error, { phase: "tool" });
    return done(`Error: ${messageOf(error)}`, messageOf(error));
  }
}

function blockedResult(info: ToolCallInfo, reason: string): ToolResultInfo {
  return {
    toolCallId: info.id,
    toolName: info.name,
    content: `Blocked: ${reason}`,
    success: false,
    duration: null,
    error: reason,
  };
}
