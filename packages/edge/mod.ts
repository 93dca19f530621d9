/**
 * The edge Worker and its bundle's data.
 *
 * @module
 */
export * from "./bundle_data.ts";
export * from "./worker.ts";

// Types the exports above refer to.
export type { EffectiveLimits } from "../core/runtime/types.ts";
export type { EventType } from "../core/schema/event_types.ts";
export { EVENT_TYPES } from "../core/schema/event_types.ts";
export type { Manifest, ManifestLimits } from "../core/schema/manifest.ts";
export type { PluginAbi } from "../runtime-wasm/mod.ts";
export type { ImageLayers, LoadedPlugin, MemoryImage } from "../runtime-wasm/mod.ts";
export type { PreparedPlugin } from "../runtime-wasm/mod.ts";
export type {
  AuditHook,
  AuditRow,
  CapturedEvent,
  CapturePage,
  CapturePolicy,
  CaptureQuery,
  HookRow,
  HookVersionRow,
  ShadowReport,
  ShadowRun,
  ShadowState,
  StoredRuntime,
  TenantPolicy,
  TenantRow,
} from "../store/store.ts";
