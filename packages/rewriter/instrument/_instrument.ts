/**
 * `instrument()`: caps memory, meters fuel, bounds call depth and adds the
 * host-facing exports, then re-assembles the module.
 *
 * @module
 */

import { HookboxError } from "../../core/errors.ts";
import { assemble, checkValid } from "../encode/_assemble.ts";
import { activeDataRanges, coalesceData } from "../encode/_data.ts";
import { cappedMemories, capTables, type ImportedMemory } from "./_memory.ts";
import { checkModule, MAX_TABLE_ENTRIES } from "../decode/_limits.ts";
import { type FuncType, SECTION } from "../decode/_module.ts";
import { type ParsedModule, parseModule } from "../decode/_parse.ts";
import { makePlan, type Plan } from "./_plan.ts";
import { invalid, Reader } from "../decode/_reader.ts";
import { type FuncShape, remapFunc } from "./_code.ts";
import { COMPILATION_PRIORITY, remapCompilationHints } from "../_hints.ts";
import * as S from "../encode/_sections.ts";
import { typeEntry } from "../encode/_entries.ts";
import { Writer } from "../encode/_writer.ts";
import { TYPE } from "../decode/_op.ts";

/** Options for {@linkcode instrument}. */
export interface InstrumentOptions {
  /** Cap on all defined linear memories together, in 64 KiB pages. */
  memoryPages: number;
  /** Cap on all defined tables together, in entries. @default MAX_TABLE_ENTRIES */
  tableEntries?: number;
  /** Insert fuel metering. @default true */
  meterFuel?: boolean;
  /**
   * Initial value of `__hookbox_fuel`. Only matters for a `start` function,
   * which runs during instantiation before the host can set the counter.
   * @default 0
   */
  initialFuel?: number;
  /** Export every mutable defined global as `__hookbox_g<index>`. @default false */
  exportGlobals?: boolean;
  /** Exported `() -> i32` functions to wrap as `__hookbox_call_<name>`, result in `__hookbox_rc`. @default [] */
  captureReturn?: string[];
  /** Max call depth; deeper calls invoke `hookbox.stack_exhausted`. @default undefined (off) */
  maxCallDepth?: number;
  /**
   * Make every `memory.grow` that fails (returns -1) call the import
   * `hookbox.grow_failed: () -> ()` first; the grow still returns -1 to the
   * guest. Only added when the module defines a memory.
   * @default false
   */
  signalGrowFailure?: boolean;
  /**
   * Track writes to the module's memory in 256-byte blocks: adds a second memory,
   * exported as `__hookbox_dirty`, holding one byte per block that every store,
   * atomic write and bulk write to memory 0 sets to 1 (see `_writes.ts`).
   * Only for modules with one 32-bit, unshared memory; others are left
   * untracked ({@linkcode InstrumentReport.writesTracked}).
   * @default false
   */
  trackWrites?: boolean;
  /**
   * Import the module's memory as `hookbox.memory` (same initial size, the
   * capped maximum) instead of defining it, so the host supplies it — and can
   * hand a fresh instance a zeroed memory it already has instead of a new one.
   * Only for modules with one unshared 32-bit memory. When writes are tracked
   * too, the block map is imported as well (`hookbox.blocks`, at least one
   * page, no maximum): its size follows the cap of the memory the host hands
   * over, {@linkcode blockMapPages} of it.
   * @default false
   */
  importMemory?: boolean;
  /** Check the output with `WebAssembly.validate`. @default true */
  validate?: boolean;
}

/** What {@linkcode instrumentModule} found and did besides the bytes. */
export interface InstrumentReport {
  /**
   * The module may catch exceptions (`try`, `try_table`). Conservatively true
   * when the code section was not rewritten.
   */
  exceptionHandling: boolean;
  /** Writes to memory 0 are tracked in `__hookbox_dirty`. */
  writesTracked: boolean;
  /** Memory 0 is imported as `hookbox.memory` with these limits (pages), or null. */
  memoryImport: ImportedMemory | null;
  /**
   * With `memoryImport`: the byte ranges `[from, to)` of memory 0 that
   * instantiation writes (active data segments), or null when unknown or
   * more than {@linkcode MAX_DATA_RANGES}. The rest of a new memory is zeros,
   * so a host that hands an instance a memory used before needs to zero only
   * outside these ranges.
   */
  dataRanges: [number, number][] | null;
}

/**
 * Returns new module bytes with memory capped, fuel metered and the host
 * exports added (see `mod.ts` for the protocol). The result passes
 * `WebAssembly.validate` (checked unless `validate: false`).
 *
 * Throws `HookboxError`: `PLUGIN_INVALID` for malformed or non-validating
 * input (or a wrong-typed `captureReturn` export), `PLUGIN_IMPORT_DENIED` for
 * an imported memory or table, `PLUGIN_FEATURE_DENIED` for shared memories,
 * wait instructions and 64-bit tables, `LIMIT_MEMORY` when the memories'
 * minimums exceed `memoryPages` or the tables' `tableEntries`, `LIMIT_MODULE`
 * for too many tables or too deep nesting (see `_limits.ts`),
 * `PLUGIN_EXPORT_MISSING` for an unknown `captureReturn` name.
 * Bad options throw `TypeError`.
 */
export function instrument(bytes: Uint8Array, options: InstrumentOptions): Uint8Array<ArrayBuffer> {
  return instrumentModule(bytes, options).bytes;
}

/** {@linkcode instrument}, also reporting what it found ({@linkcode InstrumentReport}). */
export function instrumentModule(
  bytes: Uint8Array,
  options: InstrumentOptions,
): { bytes: Uint8Array<ArrayBuffer>; report: InstrumentReport } {
  checkOptions(options);
  const m = parseModule(bytes);
  const denied = m.imports.find((i) => i.kind === "memory" || i.kind === "table");
  if (denied) {
    throw new HookboxError(
      "PLUGIN_IMPORT_DENIED",
      `${denied.kind} import "${denied.module}"."${denied.name}" is not allowed: plugins must define their own`,
    );
  }
  checkModule(m);
  // The rewriter assumes valid input: an invalid module could name the
  // locals, globals and memories it appends (the fuel counter among them).
  validateInput(bytes);
  const plan = makePlan(m, options);
  const tracked = plan.ctx.writes !== null;
  const only = m.memories.length === 1 ? m.memories[0]! : null;
  const importFirst = options.importMemory === true && only !== null && !only.shared &&
    !only.is64;
  const memory = cappedMemories(m, options.memoryPages, tracked, importFirst);
  const tables = capTables(m, options.tableEntries ?? MAX_TABLE_ENTRIES);
  const imports = memory.imported
    ? [...plan.imports, memoryImport(memory.imported), ...(tracked ? [BLOCK_MAP_IMPORT] : [])]
    : plan.imports;
  const payloads = rewriteSections(m, { ...plan, imports }, tables);
  if (memory.section !== null) payloads.set(SECTION.memory, memory.section);
  // Segment indices are unobservable when no body names one; bodies are only
  // read when the code section is rewritten, so otherwise assume they do.
  const named = !payloads.has(SECTION.code) || plan.ctx.seen.dataIndices;
  const data = coalesceData(m, named);
  if (data !== null) {
    payloads.set(SECTION.data, data.section);
    if (m.sections.some((s) => s.id === SECTION.dataCount)) {
      payloads.set(SECTION.dataCount, new Writer().u32(data.count).finish());
    }
  }
  const out = assemble(m, payloads, payloads.has(SECTION.code), hintsFor(m, plan));
  if (options.validate ?? true) checkValid(bytes, out);
  const rewritten = payloads.has(SECTION.code);
  const exceptionHandling = !rewritten || plan.ctx.seen.exceptions;
  return {
    bytes: out,
    report: {
      exceptionHandling,
      writesTracked: tracked,
      memoryImport: memory.imported,
      dataRanges: memory.imported ? fewRanges(data?.ranges ?? activeDataRanges(m)) : null,
    },
  };
}

/** The module's compilation hints renumbered for the output (see `_hints.ts`), or null. */
function hintsFor(m: ParsedModule, plan: Plan): Uint8Array | null {
  const section = m.sections.find((s) => s.customName === COMPILATION_PRIORITY);
  if (section === undefined) return null;
  const r = new Reader(m.bytes, section.start, section.end);
  r.name();
  const payload = remapCompilationHints(
    r.take(section.end - r.pos),
    plan.ctx.funcImports,
    m.functions.length,
    (index) => remapFunc(plan.ctx, index),
  );
  return payload === null ? null : new Writer().name(COMPILATION_PRIORITY).bytes(payload).finish();
}

/** Ranges worth skipping one by one when a memory is zeroed; more are reported as unknown. */
export const MAX_DATA_RANGES = 256;

function fewRanges(ranges: [number, number][] | null): [number, number][] | null {
  return ranges !== null && ranges.length <= MAX_DATA_RANGES ? ranges : null;
}

/** The import entry `hookbox.memory` with `limits` (the max is always present). */
function memoryImport(limits: ImportedMemory): Uint8Array {
  return new Writer().name("hookbox").name("memory").u8(2).u8(1).u32(limits.min).u32(limits.max)
    .finish();
}

/**
 * The import entry `hookbox.blocks`: the block map of a tracked module whose
 * memory is imported (memory index 1, after `hookbox.memory`), at least a
 * page, no maximum.
 */
const BLOCK_MAP_IMPORT = new Writer().name("hookbox").name("blocks").u8(2).u8(0).u32(1).finish();

function validateInput(bytes: Uint8Array): void {
  if (typeof WebAssembly === "undefined") return;
  if (!WebAssembly.validate(bytes as Uint8Array<ArrayBuffer>)) {
    throw new HookboxError("PLUGIN_INVALID", "module does not validate as WebAssembly");
  }
}

function checkOptions(o: InstrumentOptions): void {
  if (!Number.isInteger(o.memoryPages) || o.memoryPages < 0 || o.memoryPages > 65536) {
    throw new TypeError(`memoryPages must be an integer in 0..65536, got ${o.memoryPages}`);
  }
  const tables = o.tableEntries;
  if (
    tables !== undefined && (!Number.isInteger(tables) || tables < 0 || tables > MAX_TABLE_ENTRIES)
  ) {
    throw new TypeError(
      `tableEntries must be an integer in 0..${MAX_TABLE_ENTRIES}, got ${tables}`,
    );
  }
  const fuel = o.initialFuel;
  if (fuel !== undefined && (!Number.isSafeInteger(fuel) || fuel < 0)) {
    throw new TypeError(`initialFuel must be a non-negative safe integer, got ${fuel}`);
  }
  const depth = o.maxCallDepth;
  if (depth !== undefined && (!Number.isInteger(depth) || depth < 1 || depth > 2 ** 31 - 1)) {
    throw new TypeError(`maxCallDepth must be a positive 32-bit integer, got ${depth}`);
  }
}

type Entry = (r: Reader, w: Writer) => void;

function rewriteSections(
  m: ParsedModule,
  p: Plan,
  tableMaxima: readonly number[],
): Map<number, Uint8Array> {
  const out = new Map<number, Uint8Array>();
  const rewrite = (id: number, entry: Entry, extra: Uint8Array[] = []) => {
    const s = m.sections.find((s) => s.id === id);
    if (s) out.set(id, S.rewriteVec(new Reader(m.bytes, s.start, s.end), entry, extra));
    else if (extra.length > 0) out.set(id, S.newVec(extra));
  };
  const { ctx } = p;
  if (ctx.shift > 0 || ctx.fuel || ctx.writes || p.bodies.length > 0) {
    const entries = entryPoints(m);
    rewrite(SECTION.code, S.codeEntry(ctx, (i) => funcShape(m, p, i, entries)), p.bodies);
  }
  const fnEntries = p.functions.map((t) => new Writer().u32(t).finish());
  rewrite(SECTION.function, (r, w) => void w.u32(r.u32()), fnEntries);
  rewrite(SECTION.import, S.copyImport, p.imports);
  rewrite(SECTION.global, S.globalEntry(ctx), p.globals);
  rewrite(SECTION.export, S.exportEntry(ctx), p.exports);
  rewrite(SECTION.table, S.tableEntry(ctx, tableMaxima));
  if (ctx.shift > 0) {
    rewrite(SECTION.element, S.elementEntry(ctx));
    if (m.start !== null) {
      const start = m.start + (m.start >= ctx.funcImports ? ctx.shift : 0);
      out.set(SECTION.start, new Writer().u32(start).finish());
    }
  }
  rewrite(SECTION.type, S.copyType, p.types.added.map(typeEntry));
  return out;
}

/** Functions the host can call directly: exports and the start function. */
function entryPoints(m: ParsedModule): Set<number> {
  const out = new Set<number>();
  for (const e of m.exports) if (e.kind === "func") out.add(e.index);
  if (m.start !== null) out.add(m.start);
  return out;
}

/** Parameter count, entry-point flag and encoded result block type of defined function `defined`. */
function funcShape(m: ParsedModule, p: Plan, defined: number, entries: Set<number>): FuncShape {
  const t: FuncType | undefined = m.types[m.functions[defined] ?? -1];
  if (!t) return invalid(`function ${defined} has an unknown type`, 0);
  const params = t.params.length;
  const index = p.ctx.funcImports + defined;
  const entry = entries.has(index);
  if (t.results.length === 0) return { params, entry, blockType: [TYPE.void] };
  if (t.results.length === 1) return { params, entry, blockType: [t.results[0]!] };
  const blockType = [...new Writer().signed(p.types.indexOf([], t.results)).finish()];
  return { params, entry, blockType };
}
