/**
 * Decodes the parts of a module the inspector and rewriter need: types,
 * imports, defined functions/memories/globals, exports and the start function.
 *
 * @module
 */

import { decodeInstr, type Instr, newInstr } from "./_opcodes.ts";
import { invalid, Reader } from "./_reader.ts";
import { refuseDeclaredTypes } from "./_type_budget.ts";
import { MAX_TABLES, refuseCount } from "./_limits.ts";
import { HookboxError } from "../../core/errors.ts";
import {
  EXTERNAL_KINDS,
  type ExternalKind,
  type FuncType,
  type Limits,
  type RawSection,
  readLimits,
  readTableType,
  readTypes,
  readValType,
  SECTION,
  splitSections,
} from "./_module.ts";

/** An import with its raw descriptor details. */
export interface ParsedImport {
  module: string;
  name: string;
  kind: ExternalKind;
  /** Type index for function imports. */
  typeIndex: number;
  /** Limits for memory imports. */
  limits: Limits | null;
}

/** A defined or imported global's type. */
export interface GlobalType {
  valType: number;
  mutable: boolean;
}

/** The decoded shape of a module; section payloads stay as offsets into `bytes`. */
export interface ParsedModule {
  bytes: Uint8Array;
  sections: RawSection[];
  types: FuncType[];
  imports: ParsedImport[];
  /** Type index of each defined function. */
  functions: number[];
  memories: Limits[];
  /** Defined tables' limits. */
  tables: Limits[];
  /** Defined globals only. */
  globals: GlobalType[];
  exports: { name: string; kind: ExternalKind; index: number }[];
  start: number | null;
}

/** Parses `bytes`; throws `PLUGIN_INVALID` on malformed input. */
export function parseModule(bytes: Uint8Array): ParsedModule {
  const m: ParsedModule = {
    bytes,
    sections: splitSections(bytes),
    types: [],
    imports: [],
    functions: [],
    memories: [],
    tables: [],
    globals: [],
    exports: [],
    start: null,
  };
  let bodies = 0;
  for (const s of m.sections) {
    const r = new Reader(bytes, s.start, s.end);
    if (s.id === SECTION.code) bodies = r.u32();
    else {
      if (s.id === SECTION.type) refuseDeclaredTypes(new Reader(bytes, s.start, s.end).u32());
      parseSection(m, s.id, r);
    }
  }
  if (bodies !== m.functions.length) {
    invalid(`${m.functions.length} functions declared but ${bodies} bodies`, bytes.length);
  }
  return m;
}

function parseSection(m: ParsedModule, id: number, r: Reader): void {
  switch (id) {
    case SECTION.type:
      m.types = readTypes(r);
      break;
    case SECTION.import:
      for (let n = counted(r, "imports"); n > 0; n--) m.imports.push(readImport(r));
      break;
    case SECTION.function:
      for (let n = counted(r, "functions"); n > 0; n--) m.functions.push(r.u32());
      break;
    case SECTION.memory:
      for (let n = r.u32(); n > 0; n--) m.memories.push(readLimits(r));
      break;
    case SECTION.table: {
      const n = r.u32();
      if (n > MAX_TABLES) {
        throw new HookboxError(
          "LIMIT_MODULE",
          `module defines ${n} tables, at most ${MAX_TABLES} are allowed`,
        );
      }
      for (let left = n; left > 0; left--) m.tables.push(readTable(r));
      break;
    }
    case SECTION.global:
      for (let n = counted(r, "globals"); n > 0; n--) {
        m.globals.push(readGlobalType(r));
        skipConstExpr(r);
      }
      break;
    case SECTION.export:
      for (let n = counted(r, "exports"); n > 0; n--) {
        const name = r.name();
        m.exports.push({ name, kind: readKind(r), index: r.u32() });
      }
      break;
    case SECTION.start:
      m.start = r.u32();
      break;
    case SECTION.element:
      refuseCount("elements", r.u32());
      return;
    case SECTION.data:
      refuseCount("data", r.u32());
      return;
    default:
      return;
  }
  if (!r.done) invalid(`${r.end - r.pos} trailing bytes in section ${id}`, r.pos);
}

/** A section's entry count, refused past its `MAX_COUNTS` before any entry is read. */
function counted(r: Reader, what: "imports" | "functions" | "globals" | "exports"): number {
  const n = r.u32();
  refuseCount(what, n);
  return n;
}

/** A table entry: a plain table type, or `0x40 0x00 type init-expr`. */
function readTable(r: Reader): Limits {
  if (r.bytes[r.pos] !== 0x40) return readTableType(r);
  const at = r.pos;
  r.u8();
  if (r.u8() !== 0) invalid("bad table entry prefix", at);
  const limits = readTableType(r);
  skipConstExpr(r);
  return limits;
}

function readKind(r: Reader): ExternalKind {
  const at = r.pos;
  const tag = r.u8();
  return EXTERNAL_KINDS[tag] ?? invalid(`unknown external kind ${tag}`, at);
}

/** Reads a global type: value type and mutability flag. */
export function readGlobalType(r: Reader): GlobalType {
  const valType = readValType(r);
  const at = r.pos;
  const mut = r.u8();
  if (mut > 1) invalid(`bad global mutability ${mut}`, at);
  return { valType, mutable: mut === 1 };
}

function readImport(r: Reader): ParsedImport {
  const module = r.name();
  const name = r.name();
  const kind = readKind(r);
  const imp: ParsedImport = { module, name, kind, typeIndex: -1, limits: null };
  if (kind === "func") imp.typeIndex = r.u32();
  else if (kind === "table") readTableType(r);
  else if (kind === "memory") imp.limits = readLimits(r);
  else if (kind === "global") readGlobalType(r);
  else {
    r.u8(); // tag attribute
    imp.typeIndex = r.u32();
  }
  return imp;
}

/** Skips a constant expression up to and including its `end`. */
export function skipConstExpr(r: Reader): void {
  const instr: Instr = newInstr();
  for (;;) {
    decodeInstr(r, instr);
    if (instr.op === 0x0b) return;
  }
}

/** Number of imports of `kind`. */
export function countImports(m: ParsedModule, kind: ExternalKind): number {
  return m.imports.reduce((n, i) => n + (i.kind === kind ? 1 : 0), 0);
}
