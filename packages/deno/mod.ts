/**
 * The Deno adapter: the executor with compilers and subprocesses, `hookbox serve`'s wiring, the edge bundler, upload builds and checks, caches.
 *
 * @module
 */
export { scanPromptHooks } from "./agent.ts";
export { createExecutor, type ExecutorOptions } from "./executor.ts";

// Types the exports above refer to.
export type { PromptHookInfo, PromptTiming } from "../agent-loop/prompt_hooks.ts";
export { PROMPT_TIMINGS } from "../agent-loop/prompt_hooks.ts";
export type { AsyncResultHandler } from "../core/dispatch/dispatch.ts";
export type { DispatchResult, HookRecord, Outcome } from "../core/dispatch/result.ts";
export type { ErrorCode } from "../core/errors.ts";
export { ERROR_CODES } from "../core/errors.ts";
export type { DispatchCallOptions, Executor } from "../core/executor.ts";
export type { HookProblem } from "../core/hook/discover.ts";
export type { HookDefinition, HookEntry, HookLevel, WasmFormat } from "../core/hook/types.ts";
export type { DirEntry, HostFs, PathInfo } from "../core/host.ts";
export type { Policy } from "../core/policy.ts";
export type { FailureCode, FailureOutcome, RunFailure } from "../core/runtime/failure.ts";
export { FAILURE_CODES } from "../core/runtime/failure.ts";
export type {
  ChainAnswer,
  ChainRequest,
  EffectiveLimits,
  RunRequest,
  RunResult,
  Runtime,
  RuntimeKind,
  RuntimeStats,
} from "../core/runtime/types.ts";
export type { HookEvent } from "../core/schema/event.ts";
export type { EventType } from "../core/schema/event_types.ts";
export { EVENT_TYPES } from "../core/schema/event_types.ts";
export type { Manifest, ManifestLimits } from "../core/schema/manifest.ts";
export type { InjectItem } from "../core/schema/output.ts";
