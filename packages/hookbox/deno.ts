/**
 * hookbox: run AI-agent lifecycle hooks in sandboxes with hard limits.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createExecutor } from "./deno.ts";
 * const executor = createExecutor({ userDir: null, projectDir: null });
 * const result = await executor.dispatch({
 *   event_type: "pre-tool-call",
 *   session_id: "s1",
 *   tool_name: "Bash",
 *   tool_input: { command: "ls" },
 * });
 * assert(result.decision === "allow");
 * await executor.close();
 * ```
 *
 * @module
 */
export type { DispatchCallOptions, Executor } from "../core/executor.ts";
export type { AsyncResultHandler } from "../core/dispatch/dispatch.ts";
export { createCoreExecutor } from "../core/executor.ts";
export type { DispatchResult, HookRecord, Outcome } from "../core/dispatch/result.ts";
export type { HookDefinition, HookEntry, HookLevel } from "../core/hook/types.ts";
export type { HookProblem } from "../core/hook/discover.ts";
export { DEFAULT_POLICY, type Policy } from "../core/policy.ts";
export { ERROR_CODES, type ErrorCode, HookboxError, isHookboxError } from "../core/errors.ts";
export { type HookEvent, parseEvent, tryParseEvent } from "../core/schema/event.ts";
export { EVENT_TYPES, type EventType } from "../core/schema/event_types.ts";
export type { RunRequest, RunResult, Runtime } from "../core/runtime/types.ts";
export {
  FAILURE_CODES,
  type FailureCode,
  MAX_FAILURE_MESSAGE,
  type RunFailure,
  runFailure,
} from "../core/runtime/failure.ts";
export * from "../agent-loop/mod.ts";
export { scanPromptHooks } from "../deno/agent.ts";

export { createExecutor, type ExecutorOptions } from "../deno/executor.ts";
