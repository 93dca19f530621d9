/**
 * Encoders for the entries the instrumenter appends (types, imports, globals,
 * exports, wrapper function bodies).
 *
 * @module
 */

import { Emitter } from "./_emitter.ts";
import type { ExternalKind, FuncType } from "../decode/_module.ts";
import { OP, TYPE } from "../decode/_op.ts";
import { Writer } from "./_writer.ts";

const KIND_TAG: Record<ExternalKind, number> = { func: 0, table: 1, memory: 2, global: 3, tag: 4 };

/** A function type entry. */
export function typeEntry(t: FuncType): Uint8Array {
  const w = new Writer().u8(TYPE.func).u32(t.params.length);
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
export function mutGlobalEntry(valType: typeof TYPE.i32 | typeof TYPE.i64, init = 0): Uint8Array {
  const e = new Emitter().u8(valType).u8(1);
  if (valType === TYPE.i32) e.i32Const(init);
  else e.i64Const(init);
  return e.end().finish();
}

/** An export entry. */
export function exportEntryBytes(name: string, kind: ExternalKind, index: number): Uint8Array {
  return new Writer().name(name).u8(KIND_TAG[kind]).u32(index).finish();
}

/** Body of `() -> ()` that calls `func` and stores its i32 result in `global`. */
export function captureBody(func: number, global: number): Uint8Array {
  const code = new Emitter().u8(0).call(func).globalSet(global).end().finish();
  return new Writer().sized(code).finish();
}

/**
 * Body of `(delta) -> previous` that runs `memory.grow memory` and calls
 * `growFailed` when the result is -1 (i64 for a 64-bit memory), then returns
 * the result unchanged.
 */
export function growBody(memory: number, is64: boolean, growFailed: number): Uint8Array {
  const e = new Emitter().u8(0); // no locals: the parameter doubles as the result slot
  e.localGet(0).memoryGrow(memory).localTee(0);
  if (is64) e.i64Const(-1).op(OP.i64Eq);
  else e.i32Const(-1).op(OP.i32Eq);
  e.ifVoid().call(growFailed).end();
  e.localGet(0).end();
  return new Writer().sized(e.finish()).finish();
}

/** Interns function types: finds an existing index or appends a new type. */
export class TypeTable {
  readonly added: FuncType[] = [];
  readonly #index = new Map<string, number>();
  constructor(readonly existing: FuncType[]) {
    existing.forEach((t, i) => {
      const key = typeKey(t.params, t.results);
      if (!this.#index.has(key)) this.#index.set(key, i);
    });
  }

  /** Index of the type `params -> results`, appending it if absent. */
  indexOf(params: number[], results: number[]): number {
    const key = typeKey(params, results);
    const found = this.#index.get(key);
    if (found !== undefined) return found;
    const index = this.existing.length + this.added.length;
    this.added.push({ params, results });
    this.#index.set(key, index);
    return index;
  }
}

function typeKey(params: readonly number[], results: readonly number[]): string {
  return `${params.join(",")}>${results.join(",")}`;
}
