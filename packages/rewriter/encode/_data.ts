/**
 * Fewer active data segments, same memory: consecutive active segments a
 * few zero bytes apart are joined into one. Snapshot tools (Wizer) write a
 * memory image as thousands of small segments split at runs of zeros, and an
 * engine copies each one separately at every instantiation — for the QuickJS
 * engine (about 9,000 segments of 13 bytes on average) that was half of a
 * fresh instance's cost.
 *
 * The rewrite keeps what a module can observe:
 *
 * - Only when every active segment targets memory 0 at a constant
 *   `i32.const` offset and, in section order, each starts at or after the
 *   end of the one before: then no segment writes into a gap between two
 *   others, and a gap filled with zeros leaves the zero-initialised memory as
 *   it was. Anything else (computed offsets, overlaps, another memory) leaves
 *   the section untouched.
 * - Segment indices do not move while code names segments (`memory.init`,
 *   `data.drop`): a segment folded into the one before it is replaced by an
 *   empty passive segment. After instantiation an active segment is dropped,
 *   and a dropped segment behaves as an empty one for `memory.init` and
 *   `data.drop`, so code naming it sees no difference and the data count
 *   stays right. When no code names a segment, indices cannot be observed:
 *   folded segments are left out and the data count, if any, follows (an
 *   engine keeps per-instance tables sized by the number of segments).
 * - A merged segment ends where its last part ended, so an out-of-bounds
 *   part still fails instantiation.
 * - The zeros added are bounded: gaps of at most {@linkcode MAX_GAP} bytes,
 *   and never more in all than the segments' own bytes plus
 *   {@linkcode ZERO_ALLOWANCE} (the section at most doubles, plus that).
 *
 * @module
 */

import { Reader } from "../decode/_reader.ts";
import { SECTION } from "../decode/_module.ts";
import type { ParsedModule } from "../decode/_parse.ts";
import { Writer } from "./_writer.ts";
import { assemble } from "./_assemble.ts";
import { COMPILATION_PRIORITY } from "../_hints.ts";

/** Largest run of zeros written to join two segments. */
export const MAX_GAP = 64;
/** Zeros that may be added whatever the segments' own size. */
export const ZERO_ALLOWANCE = 64 * 1024;

const I32_CONST = 0x41;
const END = 0x0b;

interface Segment {
  /** Offset (unsigned) for an active segment, null for a passive one. */
  offset: number | null;
  data: Uint8Array;
}

/** A rewritten data section and how many segments it holds. */
export interface CoalescedData {
  section: Uint8Array;
  count: number;
  /** What the new section's active segments write, as {@linkcode activeDataRanges} gives it. */
  ranges: [number, number][];
}

/**
 * The data section with adjacent active segments joined, or null when it
 * cannot be (see the module doc) or nothing would be joined. `named`: some
 * code refers to data segments by index (keep every index).
 */
export function coalesceData(m: ParsedModule, named: boolean): CoalescedData | null {
  const section = m.sections.find((s) => s.id === SECTION.data);
  if (section === undefined) return null;
  const segments = readSegments(new Reader(m.bytes, section.start, section.end));
  if (segments === null) return null;
  let end = 0;
  let ownBytes = 0;
  for (const s of segments) {
    if (s.offset === null) continue;
    if (s.offset < end) return null; // out of order or overlapping
    end = s.offset + s.data.length;
    ownBytes += s.data.length;
  }
  // Runs of segments to join: [first index, ...parts].
  const joined = new Map<number, number[]>();
  let run: number[] | null = null;
  let runEnd = 0;
  let zeros = 0;
  segments.forEach((s, i) => {
    if (s.offset === null) return;
    const gap = s.offset - runEnd;
    if (run !== null && gap <= MAX_GAP && zeros + gap <= ownBytes + ZERO_ALLOWANCE) {
      run.push(i);
      zeros += gap;
    } else {
      run = [i];
      joined.set(i, run);
    }
    runEnd = s.offset + s.data.length;
  });
  if (joined.size === segments.filter((s) => s.offset !== null).length) return null;
  const folded = new Set<number>();
  for (const [first, parts] of joined) for (const i of parts) if (i !== first) folded.add(i);
  const count = named ? segments.length : segments.length - folded.size;
  const w = new Writer().u32(count);
  const ranges: [number, number][] = [];
  segments.forEach((s, i) => {
    if (folded.has(i)) {
      if (named) w.u8(1).u32(0); // empty passive: what the dropped active segment was
    } else if (s.offset === null) {
      w.u8(1).sized(s.data);
    } else {
      const parts = joined.get(i)!;
      const last = segments[parts.at(-1)!]!;
      const bytes = new Uint8Array(last.offset! + last.data.length - s.offset);
      for (const k of parts) bytes.set(segments[k]!.data, segments[k]!.offset! - s.offset);
      w.u8(0).u8(I32_CONST).signed(s.offset | 0).u8(END).sized(bytes);
      if (bytes.length > 0) ranges.push([s.offset, s.offset + bytes.length]);
    }
  });
  return { section: w.finish(), count, ranges: mergeRanges(ranges) };
}

/**
 * The byte ranges `[from, to)` of memory 0 that the module's active data
 * segments write when it is instantiated, sorted and merged; null when a
 * segment is not a constant-offset segment of memory 0 (then nothing is
 * known). A module without data writes nothing.
 */
export function activeDataRanges(m: ParsedModule): [number, number][] | null {
  const section = m.sections.find((s) => s.id === SECTION.data);
  if (section === undefined) return [];
  const segments = readSegments(new Reader(m.bytes, section.start, section.end));
  if (segments === null) return null;
  return mergeRanges(
    segments
      .filter((s) => s.offset !== null && s.data.length > 0)
      .map((s): [number, number] => [s.offset!, s.offset! + s.data.length]),
  );
}

/** `ranges` sorted, overlapping and touching ones merged. */
function mergeRanges(ranges: [number, number][]): [number, number][] {
  const merged: [number, number][] = [];
  for (const [from, to] of ranges.sort((a, b) => a[0] - b[0])) {
    const last = merged.at(-1);
    if (last !== undefined && from <= last[1]) last[1] = Math.max(last[1], to);
    else merged.push([from, to]);
  }
  return merged;
}

/** A module's code apart from the data its memory starts with ({@linkcode splitActiveData}). */
export interface SplitData {
  /**
   * The module without its active data segments and with its memory's
   * minimum 0: modules that differ only in their memory's initial contents
   * and size (a snapshot engine with different scripts in it) become the
   * same bytes. Active segments after the last passive one are left out
   * (no index of a passive one moves; their number no longer shows); an
   * active one before it becomes an empty passive one, and so does every
   * active one when some code names one by index.
   */
  skeleton: Uint8Array<ArrayBuffer>;
  /** The memory's minimum in the module as given, pages. */
  pages: number;
  /** The memory's declared maximum, pages; null for none. */
  maxPages: number | null;
  /**
   * What instantiation wrote into the (zeroed) memory, as runs of
   * `[offset, bytes]`: sorted, disjoint, zeros between runs.
   */
  runs: [number, Uint8Array][];
  /** The custom sections asked to be left out of the skeleton, by name (the last of a name). */
  custom: Record<string, Uint8Array>;
}

/** Zero bytes inside one run of {@linkcode SplitData.runs} before it is split in two. */
const RUN_GAP = 64;

/**
 * Splits a module's active data from the rest (see {@linkcode SplitData});
 * null for a module this does not apply to: one that does not define exactly
 * one 32-bit unshared memory, has data it cannot read (a computed offset,
 * another memory) or data past its memory's minimum (which fails
 * instantiation, and must go on failing).
 */
export function splitActiveData(
  m: ParsedModule,
  leaveOut: readonly string[] = [],
): SplitData | null {
  const memory = m.memories.length === 1 ? m.memories[0]! : null;
  if (memory === null || memory.shared || memory.is64) return null;
  if (m.imports.some((i) => i.kind === "memory")) return null;
  const section = m.sections.find((s) => s.id === SECTION.data);
  const segments = section === undefined
    ? []
    : readSegments(new Reader(m.bytes, section.start, section.end));
  if (segments === null) return null;
  const size = memory.min * 65536;
  if (segments.some((s) => s.offset !== null && s.offset + s.data.length > size)) return null;
  // Applied in order, as instantiation does: a later segment wins where two overlap.
  let end = 0;
  for (const s of segments) if (s.offset !== null) end = Math.max(end, s.offset + s.data.length);
  const image = new Uint8Array(end);
  for (const s of segments) if (s.offset !== null) image.set(s.data, s.offset);
  const runs: [number, Uint8Array][] = [];
  for (let at = 0; at < end;) {
    if (image[at] === 0) {
      at++;
      continue;
    }
    let to = at + 1;
    for (let zeros = 0; to < end && zeros <= RUN_GAP; to++) zeros = image[to] === 0 ? zeros + 1 : 0;
    while (image[to - 1] === 0) to--;
    runs.push([at, image.slice(at, to)]);
    at = to;
  }
  const limits = new Writer().u32(1).u8(memory.flags).u32(0);
  if (memory.max !== null) limits.u32(memory.max);
  const custom: Record<string, Uint8Array> = {};
  const kept = m.sections.filter((s) => {
    if (s.customName === undefined || !leaveOut.includes(s.customName)) return true;
    const r = new Reader(m.bytes, s.start, s.end);
    r.name();
    custom[s.customName] = m.bytes.slice(r.pos, s.end);
    return false;
  });
  // The engine's compilation hints name functions by index, which the skeleton keeps: kept with
  // it (a module without them compiles its hot functions lazily, on the thread that calls them).
  const hinted = kept.find((s) => s.customName === COMPILATION_PRIORITY);
  const hints = hinted === undefined ? null : m.bytes.subarray(hinted.start, hinted.end);
  const skeletonOf = (count: number) => {
    const data = new Writer().u32(count);
    for (const s of segments.slice(0, count)) {
      if (s.offset === null) data.u8(1).sized(s.data);
      else data.u8(1).u32(0);
    }
    const payloads = new Map<number, Uint8Array>([[SECTION.memory, limits.finish()]]);
    if (section !== undefined) payloads.set(SECTION.data, data.finish());
    if (m.sections.some((s) => s.id === SECTION.dataCount)) {
      payloads.set(SECTION.dataCount, new Writer().u32(count).finish());
    }
    return assemble({ ...m, sections: kept }, payloads, false, hints);
  };
  const last = segments.findLastIndex((s) => s.offset === null);
  let skeleton = skeletonOf(last + 1);
  // Code that names a segment left out (`data.drop` of an active one) no longer validates.
  if (
    last + 1 < segments.length && typeof WebAssembly !== "undefined" &&
    !WebAssembly.validate(skeleton)
  ) skeleton = skeletonOf(segments.length);
  return { skeleton, pages: memory.min, maxPages: memory.max, runs, custom };
}

/** Every segment, or null if one is not of a form this rewrite handles. */
function readSegments(r: Reader): Segment[] | null {
  const count = r.u32();
  const out: Segment[] = [];
  for (let i = 0; i < count; i++) {
    const flags = r.u32();
    if (flags === 1) {
      out.push({ offset: null, data: r.take(r.u32()) });
      continue;
    }
    if (flags === 2 && r.u32() !== 0) return null; // another memory
    if (flags !== 0 && flags !== 2) return null;
    if (r.u8() !== I32_CONST) return null;
    const offset = r.signed(32) >>> 0;
    if (r.u8() !== END) return null;
    out.push({ offset, data: r.take(r.u32()) });
  }
  return r.done ? out : null;
}
