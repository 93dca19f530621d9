/**
 * The service's `Store` interface and its rows.
 *
 * @module
 */
export * from "./store.ts";

// Types the exports above refer to.
export type { EventType } from "../core/schema/event_types.ts";
export { EVENT_TYPES } from "../core/schema/event_types.ts";
export type { Manifest, ManifestLimits } from "../core/schema/manifest.ts";
