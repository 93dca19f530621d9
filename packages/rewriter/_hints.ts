/**
 * Compilation hints (the WebAssembly compilation-hints proposal's
 * `metadata.code.compilation_priority` custom section): a list of functions
 * with a compilation priority each. V8 run with
 * `--experimental-wasm-compilation-hints` compiles the listed functions while
 * it compiles the module, instead of lazily at their first call. The QuickJS
 * engine carries one for the functions a hook call runs (`plugins/engine/
 * hot_functions.txt`), so a one-shot process compiles them in the background
 * while it loads its own code rather than on the first call's path.
 *
 * The section names functions by index. Instrumenting adds imports, which
 * renumbers every defined function, so the rewriter passes the section
 * through {@linkcode remapCompilationHints} and places it before the code
 * section, where V8 reads it. A hint is only ever a hint: the section is
 * dropped, never trusted, when it is malformed.
 *
 * Payload (as V8 decodes it): `count`, then per function `index` (strictly
 * increasing), `byte offset` (0: the whole function), `hint length` and
 * that many bytes (the compilation priority, optionally an optimization
 * priority; LEB128 each).
 *
 * @module
 */

import { Reader } from "./decode/_reader.ts";
import { Writer } from "./encode/_writer.ts";

/** The custom section's name. */
export const COMPILATION_PRIORITY = "metadata.code.compilation_priority";

/** Longest hint read (two 32-bit LEB128 values). */
const MAX_HINT_BYTES = 10;

/**
 * The payload (after the section name) with every function index passed
 * through `remap`, keeping only entries for the `defined` functions
 * `[firstDefined, firstDefined + defined)` of the input, each with its
 * compilation priority alone (an optimization priority is dropped: nothing
 * of a plugin's section reaches V8 that the rewriter did not decode); null
 * when the payload is malformed or no entry is left.
 */
export function remapCompilationHints(
  payload: Uint8Array,
  firstDefined: number,
  defined: number,
  remap: (index: number) => number,
): Uint8Array<ArrayBuffer> | null {
  const entries: [number, number][] = [];
  try {
    const r = new Reader(payload);
    let last = -1;
    for (let n = r.u32(); n > 0; n--) {
      const index = r.u32();
      if (index <= last || r.u32() !== 0) return null;
      last = index;
      const length = r.u32();
      if (length === 0 || length > MAX_HINT_BYTES) return null;
      const hint = new Reader(r.take(length));
      const priority = hint.u32();
      if (index >= firstDefined && index < firstDefined + defined) entries.push([index, priority]);
    }
    if (!r.done) return null;
  } catch {
    return null;
  }
  if (entries.length === 0) return null;
  const w = new Writer().u32(entries.length);
  for (const [index, priority] of entries) {
    w.u32(remap(index)).u32(0).sized(new Writer().u32(priority).finish());
  }
  return w.finish();
}

/** A whole custom section payload (name included) listing `indices` with `priority`. */
export function compilationHintsSection(
  indices: number[],
  priority = 0,
): Uint8Array<ArrayBuffer> {
  const sorted = [...new Set(indices)].sort((a, b) => a - b);
  const hint = new Writer().u32(priority).finish();
  const w = new Writer().name(COMPILATION_PRIORITY).u32(sorted.length);
  for (const index of sorted) w.u32(index).u32(0).sized(hint);
  return w.finish();
}

/** The function indices a compilation-priority payload (after the name) lists; null when malformed. */
export function hintedFunctions(payload: Uint8Array): number[] | null {
  const all = remapCompilationHints(payload, 0, 2 ** 32, (i) => i);
  if (all === null) return null;
  const r = new Reader(all);
  const out: number[] = [];
  for (let n = r.u32(); n > 0; n--) {
    out.push(r.u32());
    r.u32();
    r.take(r.u32());
  }
  return out;
}
