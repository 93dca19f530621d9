/**
 * Capping what a module may allocate: the maximum of every defined memory and
 * table is rewritten so that all memories together stay within the page cap
 * and all tables together within the entry cap.
 *
 * @module
 */

import { HookboxError } from "../../core/errors.ts";
import type { Limits } from "../decode/_module.ts";
import type { ParsedModule } from "../decode/_parse.ts";
import { Writer } from "../encode/_writer.ts";
import { blockMapPages } from "./_writes.ts";

/**
 * New maxima for `limits` such that their sum stays within `cap`: each keeps
 * its minimum and gets an even share of what is left of the cap (a share an
 * earlier one did not need passes on), up to its declared maximum. Throws
 * `LIMIT_MEMORY` when the minimums alone exceed the cap.
 */
export function capMaxima(
  limits: readonly Limits[],
  cap: number,
  what: "memory" | "table",
): number[] {
  const unit = what === "memory" ? "pages" : "entries";
  let spare = cap - limits.reduce((sum, l) => sum + l.min, 0);
  if (spare < 0) {
    const needed = cap - spare;
    throw new HookboxError(
      "LIMIT_MEMORY",
      `${
        what === "memory" ? "memories" : "tables"
      } need ${needed} ${unit} at start, the cap is ${cap} ${unit}`,
    );
  }
  return limits.map((l, i) => {
    const share = Math.floor(spare / (limits.length - i));
    const max = Math.min(l.max ?? Infinity, l.min + share);
    spare -= max - l.min;
    return max;
  });
}

/**
 * Returns the new memory section payload (or null when there is none), every
 * memory's max capped so that their sum is at most `cap` pages. With
 * `blockMap`, a block map memory for write tracking of memory 0 is appended:
 * one byte per 256-byte block of memory 0's capped maximum, plus slack, fixed in
 * size.
 */
export function capMemories(m: ParsedModule, cap: number, blockMap = false): Uint8Array | null {
  return cappedMemories(m, cap, blockMap, false).section;
}

/** Memory 0's limits when it is imported instead of defined. */
export interface ImportedMemory {
  /** Initial size, pages. */
  min: number;
  /** Capped maximum, pages. */
  max: number;
}

/**
 * {@linkcode capMemories}; with `importFirst`, memory 0 is left out of the
 * section (the caller imports it with the returned limits instead), and so is
 * the block map (imported too, sized by the host).
 */
export function cappedMemories(
  m: ParsedModule,
  cap: number,
  blockMap: boolean,
  importFirst: boolean,
): { section: Uint8Array | null; imported: ImportedMemory | null } {
  if (m.memories.length === 0) return { section: null, imported: null };
  const maxima = capMaxima(m.memories, cap, "memory");
  const defined = m.memories.length - (importFirst ? 1 : 0);
  const definedMap = blockMap && !importFirst;
  const w = new Writer().u32(defined + (definedMap ? 1 : 0));
  m.memories.forEach((mem, i) => {
    if (!(importFirst && i === 0)) w.u8(mem.flags | 1).u32(mem.min).u32(maxima[i]!);
  });
  if (definedMap) {
    const pages = blockMapPages(maxima[0]!);
    w.u8(1).u32(pages).u32(pages);
  }
  const imported = importFirst ? { min: m.memories[0]!.min, max: maxima[0]! } : null;
  return { section: w.finish(), imported };
}

/** The capped maximum of every defined table, their sum at most `cap` entries. */
export function capTables(m: ParsedModule, cap: number): number[] {
  return capMaxima(m.tables, cap, "table");
}
