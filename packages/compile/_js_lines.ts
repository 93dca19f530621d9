/**
 * Where each line of a JS/TS hook's bundle came from, carried in the plugin
 * (a custom section, `hookbox.lines`) so that a stack trace the engine prints
 * (`at run_default (hook.js:5)`) names the author's file and line
 * (`scripts/run.mjs:2`): the runtime rewrites it (`runtime-wasm/_lines.ts`).
 * Made at build time from esbuild's source map, so nothing decodes a source
 * map where hooks run.
 *
 * @module
 */
import { LEAST_UPPER_BOUND, originalPositionFor, TraceMap } from "@jridgewell/trace-mapping";
import { Writer } from "../rewriter/sections.ts";
import { LINES_SECTION, type LineTable } from "../core/runtime/lines.ts";

/** Numbers a table holds at most (three per run of lines): about 1 MiB of JSON. */
export const MAX_RUN_NUMBERS = 150_000;

/**
 * The table of the script the engine runs, whose esbuild output starts after
 * `prefixLines` lines; sources are named relative to `root` (the hook folder)
 * when inside it. `mapDir` is the folder the map's sources are relative to.
 */
export function lineTable(
  mapText: string,
  generatedLines: number,
  prefixLines: number,
  mapDir: string,
  root: string,
): LineTable {
  const map = new TraceMap(mapText);
  const sources: string[] = [];
  const index = new Map<string, number>();
  const runs: number[] = [];
  // A line that continues the run before it (same file, the next line; or no origin after
  // none) lengthens it: a bundle that keeps its sources' lines is a few runs per file.
  const add = (source: number, line: number) => {
    const n = runs.length;
    if (
      n > 0 && runs[n - 3] === source &&
      (source === -1 || runs[n - 2]! + runs[n - 1]! === line)
    ) {
      runs[n - 1]!++;
    } else runs.push(source, line, 1);
  };
  for (let line = 1; line <= generatedLines; line++) {
    // A bundle whose lines come from everywhere in turn keeps its first runs' origins only:
    // the table rides in the plugin, under its module cap.
    if (runs.length >= MAX_RUN_NUMBERS) break;
    const at = firstOrigin(map, line);
    if (at === null) {
      add(-1, 0);
      continue;
    }
    const name = relativeTo(root, absolute(mapDir, at.source));
    let i = index.get(name);
    if (i === undefined) {
      i = sources.push(name) - 1;
      index.set(name, i);
    }
    add(i, at.line);
  }
  return { prefix: prefixLines, sources, runs };
}

/** The origin of the first mapped column of generated `line`, or null. */
function firstOrigin(map: TraceMap, line: number): { source: string; line: number } | null {
  const found = originalPositionFor(map, {
    line,
    column: 0,
    bias: LEAST_UPPER_BOUND,
  });
  return found.source === null || found.line === null
    ? null
    : { source: found.source, line: found.line };
}

function absolute(dir: string, path: string): string {
  const parts = (path.startsWith("/") ? path : `${dir}/${path}`).split("/");
  const out: string[] = [];
  for (const part of parts) {
    if (part === "" || part === ".") continue;
    if (part === "..") out.pop();
    else out.push(part);
  }
  return `/${out.join("/")}`;
}

function relativeTo(root: string, path: string): string {
  const base = root.endsWith("/") ? root : `${root}/`;
  return path.startsWith(base) ? path.slice(base.length) : path;
}

/** `bytes` (a module) with `table` appended as its `hookbox.lines` custom section. */
export function withLineTable(bytes: Uint8Array, table: LineTable): Uint8Array {
  const payload = new TextEncoder().encode(JSON.stringify(table));
  const section = new Writer().name(LINES_SECTION).bytes(payload).finish();
  return new Writer().bytes(bytes).u8(0).sized(section).finish();
}
