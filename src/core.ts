/**
 * The Web-API core of hookbox: the executor and dispatcher, schemas, errors,
 * the WebAssembly runtime, the §6 service app and the edge Worker. Nothing
 * here touches `Deno.*` or `node:*` (checked by `tests/core_test.ts`), so it
 * runs on Deno, Node and edge runtimes; machine capabilities (files,
 * subprocesses, compilers, `Deno.serve`) live in the Deno adapter
 * (`./deno`, `src/mod.ts`).
 *
 * @example
 * ```ts ignore
 * import { createCoreExecutor, createWasmRuntime } from "@hookbox/hookbox";
 * ```
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
export {
  createWasmRuntime,
  type LoadedPlugin,
  type PluginAbi,
  type PreparedPlugin,
  type WasmRuntimeOptions,
} from "./runtime/wasm/mod.ts";
export { createPromptRuntime } from "./runtime/prompt.ts";
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
} from "./server/app.ts";
export { AuditWriter } from "./server/audit.ts";
export type { BuiltHook, HookBuilder } from "./server/builder.ts";
export { createEngine, type Engine, type EngineOptions, type ServedHook } from "./server/engine.ts";
export type {
  AuditHook,
  AuditPage,
  AuditQuery,
  AuditRow,
  HookDetail,
  HookHead,
  HookItem,
  HookRow,
  HookVersionRow,
  KeyRow,
  NewHookVersion,
  RollbackResult,
  StorageCaps,
  Store,
  StoredRuntime,
  TenantPolicy,
  TenantRow,
} from "./server/store.ts";
export { VersionRefused } from "./server/store.ts";
export type { ServiceMetrics } from "./server/service_metrics.ts";
export { createEdgeWorker, type EdgeWorker, type EdgeWorkerOptions } from "./edge/worker.ts";
export { BUNDLE_VERSION, type BundleData } from "./edge/bundle_data.ts";
export * from "./agent/mod.ts";
