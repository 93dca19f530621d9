/**
 * Stack traces at the author's line: a JS/TS hook's plugin carries, in its
 * `hookbox.lines` custom section, where each line of the script the engine
 * runs came from (made by the compiler from esbuild's source map); a trace
 * the engine prints (`at run_default (hook.js:5)`) is rewritten to the
 * author's file and line (`scripts/run.mjs:2`).
 *
 * @module
 */

/** The custom section a JS/TS hook's plugin carries its {@linkcode LineTable} in. */
export const LINES_SECTION = "hookbox.lines";

/** Where each line of the script the engine runs came from. */
export interface LineTable {
  /** Lines of the script before the bundle's first (the engine's wrapper). */
  prefix: number;
  /** The author's files, relative to the hook folder. */
  sources: string[];
  /**
   * The bundle's lines from 1, as runs of three numbers: an index into
   * `sources` (-1: no origin), the author's line of the run's first line,
   * and how many lines the run holds (each one line further in the source).
   */
  runs: number[];
}

/** The name the engine gives the hook's script in its traces. */
const SCRIPT = /\bhook\.js:(\d+)(?::(\d+))?/g;

/** Parses a `hookbox.lines` section's payload; null when it is not a table. */
export function parseLineTable(text: string): LineTable | null {
  try {
    const t = JSON.parse(text) as LineTable;
    const ok = Number.isInteger(t.prefix) && Array.isArray(t.sources) &&
      t.sources.every((s) => typeof s === "string") && Array.isArray(t.runs) &&
      t.runs.length % 3 === 0 && t.runs.every((n) => Number.isInteger(n));
    return ok ? t : null;
  } catch {
    return null;
  }
}

/**
 * `text` with each `hook.js:LINE` the table knows replaced by the author's
 * `FILE:LINE` (the engine's own column, when it gives one, has no
 * counterpart in the author's file and is left out).
 */
export function authorLines(text: string, table: LineTable): string {
  if (!text.includes("hook.js:")) return text;
  return text.replace(SCRIPT, (whole, line: string) => {
    let left = Number(line) - table.prefix - 1; // lines of the bundle before this one
    if (left < 0) return whole;
    const { runs } = table;
    for (let i = 0; i + 2 < runs.length; i += 3) {
      const length = runs[i + 2]!;
      if (left < length) {
        const source = table.sources[runs[i]!];
        return source === undefined ? whole : `${source}:${runs[i + 1]! + left}`;
      }
      left -= length;
    }
    return whole;
  });
}
