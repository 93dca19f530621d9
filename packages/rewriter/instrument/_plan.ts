/**
 * Decides what the instrumenter adds: imports, globals, wrapper functions and
 * exports, and the index bookkeeping ({@linkcode CodeContext}) for the rewrite.
 *
 * @module
 */

import { HookboxError } from "../../core/errors.ts";
import type { InstrumentOptions } from "./_instrument.ts";
import type { CodeContext } from "./_code.ts";
import { countImports, type ParsedModule } from "../decode/_parse.ts";
import * as E from "../encode/_entries.ts";
import { TYPE } from "../decode/_op.ts";

/** Export names the instrumenter adds. */
export const NAMES = {
  fuel: "__hookbox_fuel",
  rc: "__hookbox_rc",
  depth: "__hookbox_depth",
  call: "__hookbox_call_",
  global: "__hookbox_g",
  /** Memory 0, always, whatever else the module exports it as. */
  memory: "__hookbox_memory",
  blockMap: "__hookbox_dirty",
} as const;

/** Options that shape the plan: the public `InstrumentOptions` that add code or exports. */
export type PlanOptions = Pick<
  InstrumentOptions,
  | "meterFuel"
  | "initialFuel"
  | "exportGlobals"
  | "captureReturn"
  | "maxCallDepth"
  | "signalGrowFailure"
  | "trackWrites"
  | "memoryPages"
>;

/** Everything appended to the module, as encoded entries. */
export interface Plan {
  ctx: CodeContext;
  types: E.TypeTable;
  imports: Uint8Array[];
  globals: Uint8Array[];
  exports: Uint8Array[];
  /** Type index of each appended function. */
  functions: number[];
  bodies: Uint8Array[];
}

/** Computes the additions for `m` under `o`. */
export function makePlan(m: ParsedModule, o: PlanOptions): Plan {
  const funcImports = countImports(m, "func");
  const types = new E.TypeTable(m.types);
  const ctx: CodeContext = {
    funcImports,
    shift: 0,
    fuel: null,
    depth: null,
    grow: null,
    mem64: m.memories.map((mem) => mem.is64),
    writes: null,
    seen: { exceptions: false, dataIndices: false },
  };
  const p: Plan = { ctx, types, imports: [], globals: [], exports: [], functions: [], bodies: [] };
  const globalBase = countImports(m, "global") + m.globals.length;
  const addGlobal = (valType: typeof TYPE.i32 | typeof TYPE.i64, name: string, init = 0) => {
    const index = globalBase + p.globals.length;
    p.globals.push(E.mutGlobalEntry(valType, init));
    p.exports.push(E.exportEntryBytes(name, "global", index));
    return index;
  };
  const addImport = (name: string) => {
    p.imports.push(E.funcImportEntry("hookbox", name, types.indexOf([], [])));
    return funcImports + p.imports.length - 1;
  };
  if (o.meterFuel ?? true) {
    ctx.fuel = {
      global: addGlobal(TYPE.i64, NAMES.fuel, o.initialFuel),
      outOfFuel: addImport("out_of_fuel"),
    };
  }
  if (o.maxCallDepth !== undefined) {
    const global = addGlobal(TYPE.i32, NAMES.depth);
    ctx.depth = { global, max: o.maxCallDepth, exhausted: addImport("stack_exhausted") };
  }
  const growFailed = o.signalGrowFailure && m.memories.length > 0 ? addImport("grow_failed") : -1;
  ctx.shift = p.imports.length;
  if (growFailed >= 0) addGrowHelpers(m, p, growFailed);
  const capture = o.captureReturn ?? [];
  if (capture.length > 0) {
    const rc = addGlobal(TYPE.i32, NAMES.rc);
    for (const name of capture) addCapture(m, p, name, rc);
  }
  if (o.exportGlobals) addGlobalExports(m, p);
  addMemoryExport(m, p);
  if (o.trackWrites && trackable(m, o.memoryPages)) {
    ctx.writes = { memory: 0, map: m.memories.length };
    p.exports.push(E.exportEntryBytes(NAMES.blockMap, "memory", m.memories.length));
  }
  checkNameClashes(m, o, capture);
  return p;
}

/** One `(delta) -> previous` helper per memory that reports a failed grow (see `growBody`). */
function addGrowHelpers(m: ParsedModule, p: Plan, growFailed: number): void {
  p.ctx.grow = m.memories.map((mem, index) => {
    const type = mem.is64 ? TYPE.i64 : TYPE.i32;
    const func = p.ctx.funcImports + p.ctx.shift + m.functions.length + p.functions.length;
    p.functions.push(p.types.indexOf([type], [type]));
    p.bodies.push(E.growBody(index, mem.is64, growFailed));
    return func;
  });
}

function addCapture(m: ParsedModule, p: Plan, name: string, rc: number): void {
  const exp = m.exports.find((e) => e.name === name && e.kind === "func");
  if (!exp) {
    throw new HookboxError("PLUGIN_EXPORT_MISSING", `no exported function named "${name}"`);
  }
  const t = m.types[funcTypeIndex(m, p.ctx.funcImports, exp.index)];
  if (!t || t.params.length !== 0 || t.results.length !== 1 || t.results[0] !== TYPE.i32) {
    throw new HookboxError("PLUGIN_INVALID", `export "${name}" must have type () -> i32`);
  }
  const index = p.ctx.funcImports + p.ctx.shift + m.functions.length + p.functions.length;
  const target = exp.index + (exp.index >= p.ctx.funcImports ? p.ctx.shift : 0);
  p.functions.push(p.types.indexOf([], []));
  p.bodies.push(E.captureBody(target, rc));
  p.exports.push(E.exportEntryBytes(NAMES.call + name, "func", index));
}

/** Type index of function `index` in the original module. */
export function funcTypeIndex(m: ParsedModule, funcImports: number, index: number): number {
  if (index < funcImports) {
    return m.imports.filter((i) => i.kind === "func")[index]?.typeIndex ?? -1;
  }
  return m.functions[index - funcImports] ?? -1;
}

function addGlobalExports(m: ParsedModule, p: Plan): void {
  const base = countImports(m, "global");
  m.globals.forEach((g, i) => {
    if (g.mutable) {
      p.exports.push(E.exportEntryBytes(NAMES.global + (base + i), "global", base + i));
    }
  });
}

/**
 * Exports memory 0 as {@linkcode NAMES.memory} (the host finds it there
 * whatever the module calls it) and, when the module exports no memory and
 * the name is free, as `memory` for tools that expect it.
 */
function addMemoryExport(m: ParsedModule, p: Plan): void {
  if (m.memories.length === 0) return;
  p.exports.push(E.exportEntryBytes(NAMES.memory, "memory", 0));
  if (m.exports.some((e) => e.kind === "memory" || e.name === "memory")) return;
  p.exports.push(E.exportEntryBytes("memory", "memory", 0));
}

/**
 * Write tracking covers modules with exactly one defined memory, 32-bit, not
 * shared and capped under 4 GiB, and needs `WebAssembly.validate` to vet the
 * input (see `instrument`); other modules are left untracked.
 */
function trackable(m: ParsedModule, cap: number): boolean {
  const [mem, ...rest] = m.memories;
  if (mem === undefined || rest.length > 0 || mem.is64 || mem.shared) return false;
  // Under 4 GiB, so a page-range end (address + length + 4095) never wraps.
  return Math.min(mem.max ?? cap, cap) < 65536 && typeof WebAssembly !== "undefined";
}

function checkNameClashes(m: ParsedModule, o: PlanOptions, capture: string[]): void {
  const ours = [
    NAMES.fuel,
    NAMES.rc,
    NAMES.depth,
    NAMES.memory,
    NAMES.blockMap,
    ...capture.map((n) => NAMES.call + n),
  ];
  for (const e of m.exports) {
    if (ours.includes(e.name as never) || (o.exportGlobals && e.name.startsWith(NAMES.global))) {
      throw new HookboxError("PLUGIN_INVALID", `export name "${e.name}" is reserved by hookbox`);
    }
  }
  if (new Set(capture).size !== capture.length) throw new TypeError("captureReturn has duplicates");
}
