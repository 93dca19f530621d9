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
import type { LoadedPlugin } from "./_loader.ts";

const tables = new WeakMap<object, LineTable | null>();

/** The plugin's table: its own (a module shared by several plugins has none), else its module's. */
function tableOf(loaded: LoadedPlugin): LineTable | null {
  const key = loaded.lines !== undefined ? loaded : loaded.module;
  let table = tables.get(key);
  if (table === undefined) {
    const text = loaded.lines ?? sectionText(loaded.module);
    table = text === null ? null : parseLineTable(text);
    tables.set(key, table);
  }
  return table;
}

function sectionText(module: WebAssembly.Module): string | null {
  const [section] = WebAssembly.Module.customSections(module, LINES_SECTION);
  return section === undefined ? null : new TextDecoder().decode(section);
}

/** Rewrites the engine's `hook.js:LINE` in `result.stderr` to the author's file and line. */
export function atAuthorLines(loaded: LoadedPlugin, result: RunResult): void {
  if (!result.stderr?.includes("hook.js:")) return;
  const table = tableOf(loaded);
  if (table !== null) result.stderr = authorLines(result.stderr, table);
}
