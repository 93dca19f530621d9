/**
 * hookbox: run AI-agent lifecycle hooks in sandboxes with hard limits.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createExecutor } from "./mod.ts";
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
export type { DispatchCallOptions, Executor } from "./executor.ts";
export type { AsyncResultHandler } from "./dispatch/dispatch.ts";
export { createCoreExecutor } from "./executor.ts";
export type { DispatchResult, HookRecord, Outcome } from "./dispatch/result.ts";
export type { HookDefinition, HookEntry, HookLevel } from "./hook/types.ts";
export type { HookProblem } from "./hook/discover.ts";
export { DEFAULT_POLICY, type Policy } from "./policy.ts";
export { ERROR_CODES, type ErrorCode, HookboxError, isHookboxError } from "./errors.ts";
export { type HookEvent, parseEvent, tryParseEvent } from "./schema/event.ts";
export { EVENT_TYPES, type EventType } from "./schema/event_types.ts";
export type { RunRequest, RunResult, Runtime } from "./runtime/types.ts";
export {
  FAILURE_CODES,
  type FailureCode,
  MAX_FAILURE_MESSAGE,
  type RunFailure,
  runFailure,
} from "./runtime/failure.ts";
export * from "./agent/mod.ts";
export { scanPromptHooks } from "./adapters/deno/agent.ts";

export { createExecutor, type ExecutorOptions } from "./adapters/deno/executor.ts";
