/**
 * Splits a module into its sections and decodes the small shared structures
 * (limits, value types, external kinds).
 *
 * @module
 */

import { invalid, Reader } from "./_reader.ts";

/** Section ids from the core spec. */
export const SECTION = {
  custom: 0,
  type: 1,
  import: 2,
  function: 3,
  table: 4,
  memory: 5,
  global: 6,
  export: 7,
  start: 8,
  element: 9,
  code: 10,
  data: 11,
  dataCount: 12,
  tag: 13,
} as const;

/** External kinds, indexed by their binary tag. */
export const EXTERNAL_KINDS = ["func", "table", "memory", "global", "tag"] as const;

/** One of {@linkcode EXTERNAL_KINDS}. */
export type ExternalKind = typeof EXTERNAL_KINDS[number];

/** A raw section: its id and a reader over its payload. */
export interface RawSection {
  id: number;
  /** Offset of the payload in the module. */
  start: number;
  end: number;
  /** Custom-section name, when `id` is 0. */
  customName?: string;
}

const MAGIC = [0x00, 0x61, 0x73, 0x6d];

/**
 * What bytes that are not WebAssembly probably are, and what to do: source
 * text (a JS/TS or AssemblyScript hook handed to a runtime that loads
 * plugins) must be compiled first.
 */
function notWasmHint(bytes: Uint8Array): string {
  const head = new TextDecoder().decode(bytes.subarray(0, 256));
  // Text: no control character but tab, newline and carriage return, and valid UTF-8.
  const text = head.length > 0 &&
    ![...head].some((c) => c === "\ufffd" || (c < " " && c !== "\t" && c !== "\n" && c !== "\r"));
  if (!text) return "";
  return ": these bytes are text (source code?), not a plugin; compile a JS, TS or " +
    "AssemblyScript hook first (hookbox compile HOOK_DIR), or load it through the Deno " +
    "adapter (createExecutor), which compiles it";
}

/** Checks the header and returns every section in file order. */
export function splitSections(bytes: Uint8Array): RawSection[] {
  const r = new Reader(bytes);
  const magic = r.take(Math.min(4, bytes.length));
  if (magic.length < 4 || MAGIC.some((b, i) => magic[i] !== b)) {
    invalid(`missing \\0asm magic number${notWasmHint(bytes)}`, 0);
  }
  const version = r.take(4);
  if (version[0] !== 1 || version[1] !== 0 || version[2] !== 0 || version[3] !== 0) {
    invalid(`unsupported binary version [${[...version].join(",")}] (core modules are 1)`, 4);
  }
  const sections: RawSection[] = [];
  while (!r.done) {
    const headerAt = r.pos;
    const id = r.u8();
    if (id > SECTION.tag) invalid(`unknown section id ${id}`, headerAt);
    const body = r.sub(r.u32());
    const section: RawSection = { id, start: body.pos, end: body.end };
    if (id === SECTION.custom) section.customName = body.name();
    sections.push(section);
  }
  return sections;
}

/** Memory/table limits as they appear in the binary. */
export interface Limits {
  flags: number;
  min: number;
  max: number | null;
  shared: boolean;
  is64: boolean;
}

/** Reads a limits structure (flags 0–7: max, shared, 64-bit). */
export function readLimits(r: Reader): Limits {
  const at = r.pos;
  const flags = r.u8();
  if (flags > 7) invalid(`unsupported limits flags 0x${flags.toString(16)}`, at);
  const is64 = (flags & 4) !== 0;
  const min = is64 ? r.u64() : r.u32();
  const max = (flags & 1) ? (is64 ? r.u64() : r.u32()) : null;
  return { flags, min, max, shared: (flags & 2) !== 0, is64 };
}

const VALUE_TYPES = new Set([0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f]);

/** Reads one value type (numeric, v128, funcref or externref). */
export function readValType(r: Reader): number {
  const at = r.pos;
  const t = r.u8();
  if (!VALUE_TYPES.has(t)) invalid(`unsupported value type 0x${t.toString(16)}`, at);
  return t;
}

/** Reads a table type: reference type then limits. */
export function readTableType(r: Reader): Limits {
  readValType(r);
  return readLimits(r);
}

/** A function type from the type section. */
export interface FuncType {
  params: number[];
  results: number[];
}

/** Decodes the type section (plain function types only; GC rec groups are rejected). */
export function readTypes(r: Reader): FuncType[] {
  const types: FuncType[] = [];
  for (let n = r.u32(); n > 0; n--) {
    const at = r.pos;
    const form = r.u8();
    if (form !== 0x60) invalid(`unsupported type form 0x${form.toString(16)}`, at);
    const params = readVec(r, readValType);
    const results = readVec(r, readValType);
    types.push({ params, results });
  }
  return types;
}

/** Reads a LEB128 count then that many items. */
export function readVec<T>(r: Reader, item: (r: Reader) => T): T[] {
  const out: T[] = [];
  for (let n = r.u32(); n > 0; n--) out.push(item(r));
  return out;
}
