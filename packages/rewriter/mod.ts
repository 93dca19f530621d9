/**
 * WebAssembly binary inspector and rewriter. Pure TypeScript over
 * `Uint8Array`: lists a module's imports/exports/memories, and rewrites it so
 * the host can enforce limits itself, without threads — memory capped, fuel
 * metered, call depth bounded, globals and return codes exposed.
 *
 * What an instrumented module adds (names in {@linkcode HOOKBOX_EXPORTS}):
 * - `__hookbox_fuel` (mutable i64 global, initially `initialFuel` ?? 0) and the
 *   import `hookbox.out_of_fuel: () -> ()`. Every basic block is charged its
 *   static cost when it starts (1 per instruction; bulk memory/table operations
 *   {@linkcode BULK_COST} plus one unit per 16 bytes or elements of their
 *   length, charged at run time); at function entries and loop headers, when
 *   the counter is negative, `out_of_fuel` is called. The host either throws
 *   (trapping the guest) or stores a fresh positive slice and returns.
 *   The global is exact whenever control is in the host (calls out, returns).
 * - `__hookbox_depth` (mutable i32) and the import
 *   `hookbox.stack_exhausted: () -> ()` when `maxCallDepth` is set; the host
 *   throws from it, and resets the global to 0 after any trap.
 * - the import `hookbox.grow_failed: () -> ()` with `signalGrowFailure`, when
 *   the module defines a memory: every `memory.grow` becomes a call to a small
 *   helper that grows and, when the result is -1, calls `grow_failed` before
 *   returning -1 to the guest (which may handle it, as C handles a failed
 *   malloc). Wasm itself never tells the host that a grow failed.
 * - `__hookbox_rc` and `__hookbox_call_<name>` for `captureReturn`.
 * - `__hookbox_g<index>` for each mutable defined global with `exportGlobals`.
 * - `__hookbox_memory`: memory 0, whatever else the module exports it as;
 *   also `memory` when the module exports no memory and the name is free.
 * - `__hookbox_dirty` with `trackWrites`, for a module with one 32-bit,
 *   unshared memory: a second memory holding one byte per 256-byte block
 *   ({@linkcode WRITE_BLOCK_SHIFT}) of memory 0, set to 1 after every store,
 *   atomic write and memory.fill/copy/init that writes the block. A mark also
 *   covers the first {@linkcode WRITE_STRADDLE} bytes of the next block.
 *   With `importMemory` too, the map is imported (`hookbox.blocks`), the
 *   host making it {@linkcode blockMapPages} of the memory's cap.
 *   {@linkcode instrumentModule} reports whether tracking was applied and
 *   whether the module can catch exceptions.
 *
 * @example
 * ```ts
 * import { inspectModule, instrument } from "./mod.ts";
 * // (module (memory 1) (func (export "f")))
 * const bytes = new Uint8Array([
 *   0, 97, 115, 109, 1, 0, 0, 0, 1, 4, 1, 96, 0, 0, 3, 2, 1, 0, 5, 3, 1, 0, 1,
 *   7, 5, 1, 1, 102, 0, 0, 10, 4, 1, 2, 0, 11,
 * ]);
 * const out = instrument(bytes, { memoryPages: 16 });
 * const info = inspectModule(out);
 * console.assert(info.memories[0]?.max === 16);
 * console.assert(info.imports[0]?.name === "out_of_fuel");
 * ```
 *
 * @module
 */

import { parseModule } from "./decode/_parse.ts";
import { splitActiveData, type SplitData } from "./encode/_data.ts";

export { inspectModule } from "./decode/_inspect.ts";
export type {
  ExportInfo,
  ImportInfo,
  MemoryInfo,
  ModuleInfo,
  TableInfo,
} from "./decode/_inspect.ts";
export { EXTERNAL_KINDS, type ExternalKind } from "./decode/_module.ts";
export { MAX_COUNTS, MAX_NESTING, MAX_TABLES } from "./decode/_limits.ts";
export {
  admittedTypes,
  admitTypes,
  MAX_MODULE_TYPES,
  MAX_PROCESS_TYPES,
  shareTypeBudget,
  typeBudgetBuffer,
} from "./decode/_type_budget.ts";
export {
  blockMapPages,
  HOOKBOX_EXPORTS,
  MAX_TABLE_ENTRIES,
  TABLE_ENTRY_BYTES,
  WRITE_BLOCK_SHIFT,
  WRITE_STRADDLE,
} from "./shared.ts";
export { instrument, instrumentModule, MAX_DATA_RANGES } from "./instrument/_instrument.ts";
export type { InstrumentOptions, InstrumentReport } from "./instrument/_instrument.ts";
export type { ImportedMemory } from "./instrument/_memory.ts";
export { BULK_COST } from "./instrument/_code.ts";
export type { SplitData } from "./encode/_data.ts";

/**
 * A module's code apart from the data its memory starts with (see
 * `SplitData`) and the custom sections named in `leaveOut`, or null when that
 * does not apply. Throws `PLUGIN_INVALID` for bytes that are not a module.
 */
export function splitData(bytes: Uint8Array, leaveOut: readonly string[] = []): SplitData | null {
  return splitActiveData(parseModule(bytes), leaveOut);
}
