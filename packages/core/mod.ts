/**
 * Events, HOOK.md, discovery, dispatch, policy, errors, the Runtime interface and the prompt runtime: the contract of SPEC §1-§4.
 *
 * @module
 */
export type { DispatchCallOptions, Executor } from "./executor.ts";
export { type CoreConfig, createCoreExecutor } from "./executor.ts";
export type { DispatchResult, HookRecord, Outcome } from "./dispatch/result.ts";
export type { HookDefinition, HookEntry, HookLevel, WasmFormat } from "./hook/types.ts";
export type { DirEntry, HostFs, PathInfo } from "./host.ts";
export type { Manifest, ManifestLimits } from "./schema/manifest.ts";
export type { InjectItem } from "./schema/output.ts";
export type { Discovery, HookProblem } from "./hook/discover.ts";
export { DEFAULT_POLICY, type Policy } from "./policy.ts";
export { ERROR_CODES, type ErrorCode, HookboxError, isHookboxError } from "./errors.ts";
export {
  type HookEvent,
  parseEvent,
  type ParseEventResult,
  tryParseEvent,
} from "./schema/event.ts";
export { EVENT_TYPES, type EventType } from "./schema/event_types.ts";
export type {
  ChainAnswer,
  ChainRequest,
  EffectiveLimits,
  RunRequest,
  RunResult,
  Runtime,
  RuntimeKind,
  RuntimeStats,
} from "./runtime/types.ts";
export {
  FAILURE_CODES,
  type FailureCode,
  type FailureOutcome,
  MAX_FAILURE_MESSAGE,
  type RunFailure,
  runFailure,
} from "./runtime/failure.ts";
export { createPromptRuntime } from "./runtime/prompt.ts";

// Types the exports above refer to.
export type { AsyncResultHandler } from "./dispatch/dispatch.ts";
