/**
 * The Web-API core of hookbox: the executor and dispatcher, schemas, errors,
 * the WebAssembly runtime, the §6 service app and the edge Worker. Nothing
 * here touches `Deno.*` or `node:*` (checked by `tests/core_test.ts`), so it
 * runs on Deno, Node and edge runtimes; machine capabilities (files,
 * subprocesses, compilers, `Deno.serve`) live in the Deno adapter
 * (`./deno`, `packages/hookbox/deno.ts`).
 *
 * @example
 * ```ts ignore
 * import { createCoreExecutor, createWasmRuntime } from "@hookbox/hookbox";
 * ```
 *
 * @module
 */
export type { DispatchCallOptions, Executor } from "../core/executor.ts";
export { type CoreConfig, createCoreExecutor } from "../core/executor.ts";
export type { DispatchResult, HookRecord, Outcome } from "../core/dispatch/result.ts";
export type { MatcherJob } from "../core/dispatch/select.ts";
export type { HookDefinition, HookEntry, HookLevel, WasmFormat } from "../core/hook/types.ts";
export type { DirEntry, HostFs, PathInfo } from "../core/host.ts";
export type { Manifest, ManifestLimits } from "../core/schema/manifest.ts";
export type { InjectItem } from "../core/schema/output.ts";
export type { Discovery, HookProblem } from "../core/hook/discover.ts";
export { DEFAULT_POLICY, type Policy } from "../core/policy.ts";
export { ERROR_CODES, type ErrorCode, HookboxError, isHookboxError } from "../core/errors.ts";
export {
  type HookEvent,
  parseEvent,
  type ParseEventResult,
  tryParseEvent,
} from "../core/schema/event.ts";
export { EVENT_TYPES, type EventType } from "../core/schema/event_types.ts";
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
export {
  FAILURE_CODES,
  type FailureCode,
  type FailureOutcome,
  MAX_FAILURE_MESSAGE,
  type RunFailure,
  runFailure,
} from "../core/runtime/failure.ts";
export {
  createWasmRuntime,
  type ImageLayers,
  type LoadedPlugin,
  type MemoryImage,
  type PluginAbi,
  type PreparedPlugin,
  type WasmRuntimeOptions,
} from "../runtime-wasm/mod.ts";
export { createPromptRuntime } from "../core/runtime/prompt.ts";
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
} from "../service/app.ts";
export { AuditWriter } from "../service/audit.ts";
export type {
  AgentSource,
  EventBodyMessage,
  EventBodySource,
  EventCodec,
} from "../service/event_body.ts";
export type { ErrorStatus } from "../service/errors.ts";
export type { LazyPack } from "../core/schema/lazy_json.ts";
export { type ShadowCall, ShadowRunner } from "../service/replay.ts";
export type { BuiltHook, HookBuilder, HookTestReport } from "../service/builder.ts";
export {
  createEngine,
  type Engine,
  type EngineOptions,
  type ServedHook,
  type ShadowHook,
} from "../service/engine.ts";
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
export { VersionRefused } from "../store/store.ts";
export type { ServiceMetrics } from "../service/service_metrics.ts";
export { createEdgeWorker, type EdgeWorker, type EdgeWorkerOptions } from "../edge/worker.ts";
export { BUNDLE_VERSION, type BundleData, type ImagePlace } from "../edge/bundle_data.ts";
export * from "../agent-loop/mod.ts";

// Types the exports above refer to.
export type { AsyncResultHandler } from "../core/dispatch/dispatch.ts";
export type { KeyInfo } from "../store/store.ts";
