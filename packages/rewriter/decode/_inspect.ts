/**
 * `inspectModule()`: the public summary of a module's imports, exports and memories.
 *
 * @module
 */

import { parseModule } from "./_parse.ts";
import type { ExternalKind } from "./_module.ts";

/** One import of a module. */
export interface ImportInfo {
  /** The import's module name. */
  module: string;
  /** The import's field name. */
  name: string;
  /** What it imports. */
  kind: ExternalKind;
}

/** One export of a module. */
export interface ExportInfo {
  /** The export's name. */
  name: string;
  /** What it exports. */
  kind: ExternalKind;
}

/** One linear memory, imported or defined, in 64 KiB pages. */
export interface MemoryInfo {
  /** Initial size, pages. */
  min: number;
  /** Maximum size, pages, or null. */
  max: number | null;
  /** Imported rather than defined. */
  imported: boolean;
  /** A 64-bit memory. */
  memory64: boolean;
}

/** One defined table, in entries. */
export interface TableInfo {
  /** Initial size, entries. */
  min: number;
  /** Maximum size, entries, or null. */
  max: number | null;
}

/** What {@linkcode inspectModule} reports. */
export interface ModuleInfo {
  /** Every import. */
  imports: ImportInfo[];
  /** Every export. */
  exports: ExportInfo[];
  /** Every memory. */
  memories: MemoryInfo[];
  /** Defined tables (imported ones are listed in `imports`). */
  tables: TableInfo[];
  /** Size of the module, bytes. */
  byteLength: number;
  /** The module has a start function (it runs at instantiation). */
  hasStart: boolean;
}

/**
 * Parses section headers, imports, exports and memories of a core wasm module.
 * Throws `HookboxError("PLUGIN_INVALID")` on garbage or truncated bytes; the
 * message names what was wrong and at which offset.
 */
export function inspectModule(bytes: Uint8Array): ModuleInfo {
  const m = parseModule(bytes);
  const memories: MemoryInfo[] = [];
  for (const imp of m.imports) {
    if (imp.limits) memories.push(memoryInfo(imp.limits, true));
  }
  for (const limits of m.memories) memories.push(memoryInfo(limits, false));
  return {
    imports: m.imports.map(({ module, name, kind }) => ({ module, name, kind })),
    exports: m.exports.map(({ name, kind }) => ({ name, kind })),
    memories,
    tables: m.tables.map(({ min, max }) => ({ min, max })),
    byteLength: bytes.length,
    hasStart: m.start !== null,
  };
}

function memoryInfo(l: { min: number; max: number | null; is64: boolean }, imported: boolean) {
  return { min: l.min, max: l.max, imported, memory64: l.is64 };
}
