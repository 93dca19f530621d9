/**
 * Compilation hints for the QuickJS engine (see `packages/rewriter/_hints.ts`). The
 * engine is linked with its name section; {@linkcode hintByName} then lists
 * the functions named in `plugins/engine/hot_functions.txt` — what a hook
 * call runs, measured by `scripts/engine_hot.ts` — in a compilation-priority
 * section and drops every other custom section (names included), as the
 * stripped link did before. Names that the engine no longer has (another
 * QuickJS or compiler) are skipped: a hint only moves compile time.
 *
 * @module
 */
import {
  compilationHintsSection,
  Reader,
  SECTION,
  splitSections,
  Writer,
} from "../rewriter/sections.ts";

/** The name section's subsection of function names. */
const FUNCTION_NAMES = 1;

/** The names a hot-functions file lists: one per line; blank lines and `#` comments skipped. */
export function parseHotList(text: string): string[] {
  return text.split("\n").map((line) => line.replace(/#.*/, "").trim()).filter((l) => l !== "");
}

/** Function index → name, from the module's name section (empty without one). */
export function functionNames(bytes: Uint8Array): Map<number, string> {
  const names = new Map<number, string>();
  const section = splitSections(bytes).find((s) => s.customName === "name");
  if (section === undefined) return names;
  const r = new Reader(bytes, section.start, section.end);
  r.name();
  while (!r.done) {
    const id = r.u8();
    const sub = r.sub(r.u32());
    if (id !== FUNCTION_NAMES) continue;
    for (let n = sub.u32(); n > 0; n--) {
      const index = sub.u32();
      names.set(index, sub.name());
    }
  }
  return names;
}

/**
 * `bytes` with no custom sections but a compilation-priority section (just
 * before the code) for every function whose name is in `hot`; `hinted`
 * counts them.
 */
export function hintByName(
  bytes: Uint8Array,
  hot: string[],
): { bytes: Uint8Array<ArrayBuffer>; hinted: number } {
  const wanted = new Set(hot);
  const indices = [...functionNames(bytes)].filter(([, name]) => wanted.has(name)).map(([i]) => i);
  const w = new Writer().bytes(bytes.subarray(0, 8));
  for (const s of splitSections(bytes)) {
    if (s.id === SECTION.custom) continue;
    if (s.id === SECTION.code && indices.length > 0) {
      w.u8(SECTION.custom).sized(compilationHintsSection(indices));
    }
    w.u8(s.id).sized(bytes.subarray(s.start, s.end));
  }
  return { bytes: w.finish(), hinted: indices.length };
}
