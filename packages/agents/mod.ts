/**
 * Agent CLIs' hooks: each agent's payload as a hookbox event, a result as the
 * agent's answer, payloads hookbox cannot evaluate, and `install`.
 *
 * @module
 */
export * from "./adapters.ts";
export * from "./event_text.ts";
export * from "./install.ts";
export * from "./unreadable.ts";

// Types the exports above refer to.
export type { DispatchResult, HookRecord, Outcome } from "../core/dispatch/result.ts";
export type { ErrorCode } from "../core/errors.ts";
export { ERROR_CODES, HookboxError } from "../core/errors.ts";
export type { HookDefinition, HookEntry, HookLevel, WasmFormat } from "../core/hook/types.ts";
export type { FailureCode } from "../core/runtime/failure.ts";
export { FAILURE_CODES } from "../core/runtime/failure.ts";
export type { RuntimeKind } from "../core/runtime/types.ts";
export type { HookEvent, ParseEventResult } from "../core/schema/event.ts";
export type { EventText } from "../core/schema/event_text.ts";
export type { EventType } from "../core/schema/event_types.ts";
export { EVENT_TYPES } from "../core/schema/event_types.ts";
export type { Manifest, ManifestLimits } from "../core/schema/manifest.ts";
export type { StepBudget } from "../core/schema/matcher.ts";
export type { InjectItem } from "../core/schema/output.ts";
