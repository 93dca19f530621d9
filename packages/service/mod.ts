/**
 * The multi-tenant HTTP service (SPEC §6) as one Hono app: one sub-app per resource, each route declared once.
 *
 * @module
 */
export {
  AUDIT_SCAN_ROWS,
  BLOB_GRACE_MS,
  createService,
  DEFAULT_STORAGE_LIMITS,
  DEFAULT_UPLOAD_LIMITS,
  type ServerDeps,
  type Service,
  type ServiceApp,
  type StorageLimits,
  type UploadLimits,
} from "./app.ts";
export { AuditWriter } from "./audit.ts";
export type { BuiltHook, HookBuilder, HookTestReport } from "./builder.ts";
export {
  createEngine,
  type Engine,
  type EngineOptions,
  type ServedHook,
  type ShadowHook,
} from "./engine.ts";
export {
  type AnswerDiff,
  type AnswerSummary,
  CAPTURE_EVENT_KB,
  CAPTURE_RETENTION_DAYS,
  type ReplayReport,
  type ShadowCall,
  ShadowRunner,
} from "./replay.ts";
export type { ServiceMetrics } from "./service_metrics.ts";
export type { AgentSource, EventBodyMessage, EventBodySource, EventCodec } from "./event_body.ts";
export type { ErrorStatus } from "./errors.ts";
export type { LazyPack } from "../core/schema/lazy_json.ts";

// Types the exports above refer to.
export type { DispatchResult, HookRecord, Outcome } from "../core/dispatch/result.ts";
export type { MatcherJob } from "../core/dispatch/select.ts";
export type { HookDefinition, HookEntry, HookLevel, WasmFormat } from "../core/hook/types.ts";
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
export type {
  AuditHook,
  AuditPage,
  AuditQuery,
  AuditRow,
  CapturedEvent,
  CapturePage,
  CapturePolicy,
  CaptureQuery,
  HookDetail,
  HookHead,
  HookItem,
  HookRow,
  HookVersionRow,
  KeyInfo,
  KeyRow,
  NewHookVersion,
  ReplayMethods,
  RollbackResult,
  ShadowReport,
  ShadowRun,
  ShadowState,
  StorageCaps,
  Store,
  StoredRuntime,
  TenantPolicy,
  TenantRow,
} from "../store/store.ts";
