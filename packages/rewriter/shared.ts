/**
 * The names and sizes the module rewriter and the runtime both rely on: the
 * exports instrumentation adds, the write-tracking page size, table limits.
 * Small and free of the rewriter itself, so a bundle without the rewriter (an
 * edge Worker) can keep them.
 *
 * @module
 */
export { MAX_TABLE_ENTRIES, TABLE_ENTRY_BYTES } from "./decode/_limits.ts";
export { NAMES as HOOKBOX_EXPORTS } from "./instrument/_plan.ts";
export {
  BLOCK_SHIFT as WRITE_BLOCK_SHIFT,
  blockMapPages,
  STRADDLE as WRITE_STRADDLE,
} from "./instrument/_writes.ts";
