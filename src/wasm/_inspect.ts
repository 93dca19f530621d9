/**
 * `inspectModule()`: the public summary of a module's imports, exports and memories.
 *
 * @module
 */

import { parseModule } from "./_parse.ts";
import type { ExternalKind } from "./_module.ts";

/** One import of a module. */
export interface ImportInfo {
  module: string;
  name: string;
  kind: ExternalKind;
}

/** One export of a module. */
export interface ExportInfo {
  name: string;
  kind: ExternalKind;
}

/** One linear memory, imported or defined, in 64 KiB pages. */
export interface MemoryInfo {
  min: number;
  max: number | null;
  imported: boolean;
  memory64: boolean;
}

/** One defined table, in entries. */
export interface TableInfo {
  min: number;
  max: number | null;
}

/** What {@linkcode inspectModule} reports. */
export interface ModuleInfo {
  imports: ImportInfo[];
  exports: ExportInfo[];
  memories: MemoryInfo[];
  /** Defined tables (imported ones are listed in `imports`). */
  tables: TableInfo[];
  byteLength: number;
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
  };
}

function memoryInfo(l: { min: number; max: number | null; is64: boolean }, imported: boolean) {
  return { min: l.min, max: l.max, imported, memory64: l.is64 };
}
