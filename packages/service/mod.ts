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
export type { BuiltHook, HookBuilder } from "./builder.ts";
export { createEngine, type Engine, type EngineOptions, type ServedHook } from "./engine.ts";
export type { ServiceMetrics } from "./service_metrics.ts";
