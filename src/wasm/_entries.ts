/**
 * Encoders for the entries the instrumenter appends (types, imports, globals,
 * exports, wrapper function bodies).
 *
 * @module
 */

import type { ExternalKind, FuncType } from "./_module.ts";
import { Writer } from "./_writer.ts";

const KIND_TAG: Record<ExternalKind, number> = { func: 0, table: 1, memory: 2, global: 3, tag: 4 };

/** A function type entry. */
export function typeEntry(t: FuncType): Uint8Array {
  const w = new Writer().u8(0x60).u32(t.params.length);
  t.params.forEach((p) => w.u8(p));
  w.u32(t.results.length);
  t.results.forEach((p) => w.u8(p));
  return w.finish();
}

/** A function import entry. */
export function funcImportEntry(module: string, name: string, typeIndex: number): Uint8Array {
  return new Writer().name(module).name(name).u8(0).u32(typeIndex).finish();
}

/** A mutable i32 or i64 global initialised to `init`. */
export function mutGlobalEntry(valType: 0x7f | 0x7e, init = 0): Uint8Array {
  const w = new Writer().u8(valType).u8(1).u8(valType === 0x7f ? 0x41 : 0x42);
  return w.signed(init).u8(0x0b).finish();
}

/** An export entry. */
export function exportEntryBytes(name: string, kind: ExternalKind, index: number): Uint8Array {
  return new Writer().name(name).u8(KIND_TAG[kind]).u32(index).finish();
}

/** Body of `() -> ()` that calls `func` and stores its i32 result in `global`. */
export function captureBody(func: number, global: number): Uint8Array {
  const code = new Writer().u8(0).u8(0x10).u32(func).u8(0x24).u32(global).u8(0x0b).finish();
  return new Writer().sized(code).finish();
}

/**
 * Body of `(delta) -> previous` that runs `memory.grow memory` and calls
 * `growFailed` when the result is -1 (i64 for a 64-bit memory), then returns
 * the result unchanged.
 */
export function growBody(memory: number, is64: boolean, growFailed: number): Uint8Array {
  const w = new Writer().u8(0); // no locals: the parameter doubles as the result slot
  w.u8(0x20).u32(0).u8(0x40).u32(memory).u8(0x22).u32(0); // local.get, memory.grow, local.tee
  if (is64) w.u8(0x42).signed(-1).u8(0x51); // i64.const -1, i64.eq
  else w.u8(0x41).signed(-1).u8(0x46); // i32.const -1, i32.eq
  w.u8(0x04).u8(0x40).u8(0x10).u32(growFailed).u8(0x0b); // if: call grow_failed
  w.u8(0x20).u32(0).u8(0x0b);
  return new Writer().sized(w.finish()).finish();
}

/** Interns function types: finds an existing index or appends a new type. */
export class TypeTable {
  readonly added: FuncType[] = [];
  constructor(readonly existing: FuncType[]) {}

  /** Index of the type `params -> results`, appending it if absent. */
  indexOf(params: number[], results: number[]): number {
    const same = (t: FuncType) =>
      t.params.length === params.length && t.results.length === results.length &&
      t.params.every((p, i) => p === params[i]) && t.results.every((p, i) => p === results[i]);
    const all = [...this.existing, ...this.added];
    const found = all.findIndex(same);
    if (found >= 0) return found;
    this.added.push({ params, results });
    return all.length;
  }
}
