/**
 * "Did you mean": the known name a mistyped one most likely meant.
 *
 * @module
 */

/** Levenshtein distance between two short names. */
export function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + cost);
    }
    row = next;
  }
  return row[b.length]!;
}

/**
 * The first of `known` that `name` is the start of (3 characters or more)
 * or is at most two edits from; undefined when none is that close.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { nearest } from "./near.ts";
 * assert.equal(nearest("timout", ["timeout", "trigger"]), "timeout");
 * assert.equal(nearest("memory", ["memory_mb", "fuel"]), "memory_mb");
 * assert.equal(nearest("zzz", ["timeout"]), undefined);
 * ```
 */
export function nearest(name: string, known: readonly string[]): string | undefined {
  // Two edits change the length by two at most: a longer name (an event's
  // text, say) is never compared letter by letter.
  return known.find((k) => name.length >= 3 && k.startsWith(name)) ??
    known.find((k) => Math.abs(k.length - name.length) <= 2 && editDistance(name, k) <= 2);
}
