/**
 * An order for byte strings that puts each next to the one most like it, for
 * `hookbox bundle`'s `images.bin`: deflate only finds what repeats within
 * its 32 KiB window, and the images of JS hooks written from one template
 * (each a few KiB of runs against the engine's base image) are nearly the
 * same bytes at shifted offsets. Packed in the order their tenants came,
 * similar hooks sat too far apart to share anything; side by side, a
 * thousand tenants' hooks of five kinds deflated to a sixth.
 *
 * Likeness is estimated from a bottom-k sketch of each string's 8-byte
 * shingles (the k smallest of their hashes; two strings share about as many
 * of those as their shingle sets overlap), then the strings are chained
 * greedily: from the last one placed to the unplaced one sharing most of its
 * sketch, or, when none shares any, to the first unplaced in the given
 * order. Deterministic for the same input.
 *
 * @module
 */

/** Shingles kept per string. */
const SKETCH = 32;

/** Unplaced strings looked at per sketch value and step (see {@linkcode similarOrder}). */
const CANDIDATES = 64;

/** Bytes in one shingle. */
const SHINGLE = 8;

/**
 * Hashes kept for sorting, about: of a longer string only those below a
 * bound are kept (its smallest are among them), so a hook whose image is
 * megabytes costs one pass over it, not a sort of a hash per byte.
 */
const KEPT = 4096;

/** The {@linkcode SKETCH} smallest distinct hashes of `bytes`' shingles, ascending. */
function sketch(bytes: Uint8Array): Uint32Array {
  const count = bytes.length - SHINGLE + 1;
  if (count <= 0) return new Uint32Array(0);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const smallest = (bound: number) => {
    const kept: number[] = [];
    for (let i = 0; i < count; i++) {
      // A 32-bit mix of the shingle's two words (murmur3's finaliser steps).
      let h = Math.imul(view.getUint32(i, true), 0xcc9e2d51) ^ view.getUint32(i + 4, true);
      h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
      h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
      h = (h ^ (h >>> 16)) >>> 0;
      if (h < bound) kept.push(h);
    }
    const sorted = Uint32Array.from(kept).sort();
    const out: number[] = [];
    for (let i = 0; i < sorted.length && out.length < SKETCH; i++) {
      if (i === 0 || sorted[i] !== sorted[i - 1]) out.push(sorted[i]!);
    }
    return out;
  };
  const all = 2 ** 32;
  let out = count <= KEPT ? smallest(all) : smallest(all * (KEPT / count));
  // Fewer than a sketch's worth under the bound (a string of few distinct shingles): all of them.
  if (out.length < SKETCH && count > KEPT) out = smallest(all);
  return Uint32Array.from(out);
}

/**
 * Indexes of `items`, ordered so that similar items are adjacent (see the
 * module doc).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { similarOrder } from "./_similar_order.ts";
 * const text = (s: string) => new TextEncoder().encode(s);
 * const items = ["alpha beta gamma delta", "one two three four five", "alpha beta gamma delta!"];
 * assert.deepEqual(similarOrder(items.map(text)), [0, 2, 1]);
 * ```
 */
export function similarOrder(items: readonly Uint8Array[]): number[] {
  const sketches = items.map(sketch);
  const holders = new Map<number, number[]>();
  sketches.forEach((s, i) => {
    for (const value of s) {
      let list = holders.get(value);
      if (list === undefined) holders.set(value, list = []);
      list.push(i);
    }
  });
  /** Where each holder list's unplaced part starts. */
  const starts = new Map<number, number>();
  const placed = new Uint8Array(items.length);
  const order: number[] = [];
  let first = 0;
  let last = -1;
  while (order.length < items.length) {
    let pick = -1;
    if (last >= 0) {
      const shared = new Map<number, number>();
      for (const value of sketches[last]!) {
        const list = holders.get(value)!;
        // Placed holders at the front are passed for good; at most CANDIDATES unplaced ones are
        // looked at, so a thousand equal images cost a thousand steps, not a million.
        let start = starts.get(value) ?? 0;
        while (start < list.length && placed[list[start]!] === 1) start++;
        starts.set(value, start);
        let seen = 0;
        for (let k = start; k < list.length && seen < CANDIDATES; k++) {
          const j = list[k]!;
          if (placed[j] === 1) continue;
          seen++;
          shared.set(j, (shared.get(j) ?? 0) + 1);
        }
      }
      let best = 0;
      for (const [j, n] of shared) {
        if (n > best || (n === best && j < pick)) [best, pick] = [n, j];
      }
    }
    if (pick < 0) {
      while (placed[first] === 1) first++;
      pick = first;
    }
    placed[pick] = 1;
    order.push(pick);
    last = pick;
  }
  return order;
}
