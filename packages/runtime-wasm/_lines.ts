/**
 * A JS/TS hook's stack traces at the author's line: the plugin's
 * `hookbox.lines` section (`core/runtime/lines.ts`), read once per compiled
 * module, rewrites `hook.js:LINE` in what the call printed on stderr.
 *
 * @module
 */
import {
  authorLines,
  LINES_SECTION,
  type LineTable,
  parseLineTable,
} from "../core/runtime/lines.ts";
import type { RunResult } from "../core/runtime/types.ts";

const tables = new WeakMap<WebAssembly.Module, LineTable | null>();

function tableOf(module: WebAssembly.Module): LineTable | null {
  let table = tables.get(module);
  if (table === undefined) {
    const [section] = WebAssembly.Module.customSections(module, LINES_SECTION);
    table = section === undefined ? null : parseLineTable(new TextDecoder().decode(section));
    tables.set(module, table);
  }
  return table;
}

/** Rewrites the engine's `hook.js:LINE` in `result.stderr` to the author's file and line. */
export function atAuthorLines(module: WebAssembly.Module, result: RunResult): void {
  if (!result.stderr?.includes("hook.js:")) return;
  const table = tableOf(module);
  if (table !== null) result.stderr = authorLines(result.stderr, table);
}
