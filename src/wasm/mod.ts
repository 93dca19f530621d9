/**
 * WebAssembly binary inspector and rewriter. Pure TypeScript over
 * `Uint8Array`: lists a module's imports/exports/memories, and rewrites it so
 * the host can enforce limits itself, without threads — memory capped, fuel
 * metered, call depth bounded, globals and return codes exposed.
 *
 * Fuel protocol: the instrumented module exports a mutable i64 global
 * `__hookbox_fuel` (initially 0) and imports `hookbox.out_of_fuel: () -> ()`.
 * At each function entry and loop header it subtracts the static cost of the
 * code that follows (one unit per instruction, bulk memory/table operations a
 * flat 64) and calls `out_of_fuel` when the counter goes negative. The host
 * either throws from it (trapping the guest) or refills the counter.
 *
 * @module
 */

export { inspectModule } from "./_inspect.ts";
export type { ExportInfo, ImportInfo, MemoryInfo, ModuleInfo } from "./_inspect.ts";
export { instrument } from "./_instrument.ts";
export type { InstrumentOptions } from "./_instrument.ts";
export { BULK_COST } from "./_code.ts";
export { NAMES as HOOKBOX_EXPORTS } from "./_plan.ts";
