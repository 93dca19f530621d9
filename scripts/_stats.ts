/**
 * Order statistics shared by the benchmarks.
 *
 * @module
 */

/** The value at fraction `p` (0–1) of an ascending array; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

/** The median of `xs` (the upper one of an even count); `xs` is not reordered. */
export function median(xs: readonly number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
}
