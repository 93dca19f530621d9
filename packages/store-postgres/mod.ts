/**
 * The PostgreSQL store.
 *
 * @module
 */
export { openPostgresStore } from "./postgres.ts";

// Types the exports above refer to.
export type { EventType } from "../core/schema/event_types.ts";
export { EVENT_TYPES } from "../core/schema/event_types.ts";
export type { Manifest, ManifestLimits } from "../core/schema/manifest.ts";
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
