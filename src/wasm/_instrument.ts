/**
 * `instrument()`: caps memory, meters fuel, bounds call depth and adds the
 * host-facing exports, then re-assembles the module.
 *
 * @module
 */

import { HookboxError } from "../errors.ts";
import { assemble, checkValid } from "./_assemble.ts";
import { capMemories } from "./_memory.ts";
import { type FuncType, SECTION } from "./_module.ts";
import { type ParsedModule, parseModule } from "./_parse.ts";
import { makePlan, type Plan } from "./_plan.ts";
import { invalid, Reader } from "./_reader.ts";
import type { FuncShape } from "./_code.ts";
import * as S from "./_sections.ts";
import { typeEntry } from "./_entries.ts";
import { Writer } from "./_writer.ts";

/** Options for {@linkcode instrument}. */
export interface InstrumentOptions {
  /** Cap on each defined linear memory, in 64 KiB pages. */
  memoryPages: number;
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
   * Track writes to the module's memory in 4 KiB pages: adds a second memory,
   * exported as `__hookbox_dirty`, holding one byte per page that every store,
   * atomic write and bulk write to memory 0 sets to 1 (see `_writes.ts`).
   * Only for modules with one 32-bit, unshared memory; others are left
   * untracked ({@linkcode InstrumentReport.writesTracked}).
   * @default false
   */
  trackWrites?: boolean;
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
}

/**
 * Returns new module bytes with memory capped, fuel metered and the host
 * exports added (see `mod.ts` for the protocol). The result passes
 * `WebAssembly.validate` (checked unless `validate: false`).
 *
 * Throws `HookboxError`: `PLUGIN_INVALID` for malformed or non-validating
 * input (or a wrong-typed `captureReturn` export), `PLUGIN_IMPORT_DENIED` for
 * an imported memory, `LIMIT_MEMORY` when a memory's minimum exceeds
 * `memoryPages`, `PLUGIN_EXPORT_MISSING` for an unknown `captureReturn` name.
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
  const denied = m.imports.find((i) => i.kind === "memory");
  if (denied) {
    throw new HookboxError(
      "PLUGIN_IMPORT_DENIED",
      `memory import "${denied.module}"."${denied.name}" is not allowed: plugins must define their own memory`,
    );
  }
  const plan = makePlan(m, options);
  const tracked = plan.ctx.writes !== null;
  // The page map is a memory the original module cannot name: an input that
  // refers to a second memory must be refused, not made valid by ours.
  if (tracked && !WebAssembly.validate(bytes as Uint8Array<ArrayBuffer>)) {
    throw new HookboxError("PLUGIN_INVALID", "module does not validate as WebAssembly");
  }
  const memory = capMemories(m, options.memoryPages, tracked);
  const payloads = rewriteSections(m, plan);
  if (memory !== null) payloads.set(SECTION.memory, memory);
  const out = assemble(m, payloads, payloads.has(SECTION.code));
  if (options.validate ?? true) checkValid(bytes, out);
  const rewritten = payloads.has(SECTION.code);
  const exceptionHandling = !rewritten || plan.ctx.seen.exceptions;
  return { bytes: out, report: { exceptionHandling, writesTracked: tracked } };
}

function checkOptions(o: InstrumentOptions): void {
  if (!Number.isInteger(o.memoryPages) || o.memoryPages < 0 || o.memoryPages > 65536) {
    throw new TypeError(`memoryPages must be an integer in 0..65536, got ${o.memoryPages}`);
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

function rewriteSections(m: ParsedModule, p: Plan): Map<number, Uint8Array> {
  const out = new Map<number, Uint8Array>();
  const rewrite = (id: number, entry: Entry, extra: Uint8Array[] = []) => {
    const s = m.sections.find((s) => s.id === id);
    if (s) out.set(id, S.rewriteVec(new Reader(m.bytes, s.start, s.end), entry, extra));
    else if (extra.length > 0) out.set(id, S.newVec(extra));
  };
  const { ctx } = p;
  if (ctx.shift > 0 || ctx.fuel || ctx.writes || p.bodies.length > 0) {
    rewrite(SECTION.code, S.codeEntry(ctx, (i) => funcShape(m, p, i)), p.bodies);
  }
  const fnEntries = p.functions.map((t) => new Writer().u32(t).finish());
  rewrite(SECTION.function, (r, w) => void w.u32(r.u32()), fnEntries);
  rewrite(SECTION.import, S.copyImport, p.imports);
  rewrite(SECTION.global, S.globalEntry(ctx), p.globals);
  rewrite(SECTION.export, S.exportEntry(ctx), p.exports);
  if (ctx.shift > 0) {
    rewrite(SECTION.table, S.tableEntry(ctx));
    rewrite(SECTION.element, S.elementEntry(ctx));
    if (m.start !== null) {
      const start = m.start + (m.start >= ctx.funcImports ? ctx.shift : 0);
      out.set(SECTION.start, new Writer().u32(start).finish());
    }
  }
  rewrite(SECTION.type, S.copyType, p.types.added.map(typeEntry));
  return out;
}

/** Parameter count, entry-point flag and encoded result block type of defined function `defined`. */
function funcShape(m: ParsedModule, p: Plan, defined: number): FuncShape {
  const t: FuncType | undefined = m.types[m.functions[defined] ?? -1];
  if (!t) return invalid(`function ${defined} has an unknown type`, 0);
  const params = t.params.length;
  const index = p.ctx.funcImports + defined;
  const entry = m.start === index || m.exports.some((e) => e.kind === "func" && e.index === index);
  if (t.results.length === 0) return { params, entry, blockType: [0x40] };
  if (t.results.length === 1) return { params, entry, blockType: [t.results[0]!] };
  const blockType = [...new Writer().signed(p.types.indexOf([], t.results)).finish()];
  return { params, entry, blockType };
}
