/**
 * V8 moves a WebAssembly function from its baseline code (Liftoff) to
 * optimised code once the function has run about 13 MB worth of its code
 * (`--wasm-tiering-budget`, counted per instance). A QuickJS hook's call runs
 * hundreds of functions a few kilobytes each, so with the default many of
 * them stay baseline for thousands of calls, and which ones have crossed the
 * line moved a warm JS hook's median by ±30% from one run to the next
 * (docs/BENCHMARKS.md). hookbox's Deno entry points lower the budget for the
 * process to {@linkcode WASM_TIERING_BUDGET}, so hot functions are optimised
 * within a few dozen calls (V8's flags are process-wide: other WebAssembly
 * in the process is optimised sooner too).
 *
 * `HOOKBOX_WASM_TIERING_BUDGET` sets another budget, or `0` leaves V8's own
 * (for a process started with its own `--v8-flags=--wasm-tiering-budget`).
 * Without permission to read the environment nothing is changed.
 *
 * @module
 */

/**
 * The budget hookbox sets: about 130 times less code run before tier-up than
 * V8's default. With 1,000,000 a warm JS hook still ran partly on baseline
 * code after 1,000 calls in about one run in three (bench_peers: 0.97–1.10×
 * the reused context instead of ~0.68×).
 */
export const WASM_TIERING_BUDGET = 100_000;

let applied: Promise<void> | null = null;

/** Lowers V8's WebAssembly tier-up budget once per process; never rejects. */
export function tuneWasmTiering(): Promise<void> {
  applied ??= (async () => {
    const configured = Deno.env.get("HOOKBOX_WASM_TIERING_BUDGET");
    const budget = configured === undefined ? WASM_TIERING_BUDGET : Number(configured);
    // V8's flag is a 32-bit int; anything else leaves V8's own budget.
    if (!Number.isInteger(budget) || budget <= 0 || budget > 0x7fff_ffff) return;
    // Loaded only here: the one-shot CLI, which runs Liftoff only, never loads it.
    const v8 = await import("node:v8");
    v8.setFlagsFromString(`--wasm-tiering-budget=${budget}`);
  })().catch(() => {});
  return applied;
}
