/**
 * Rewriting shared by function bodies and constant expressions: the rewrite
 * context, function renumbering after imports were added, and the lazy copier.
 * How fuel is charged and checked is described in `_body.ts`.
 *
 * @module
 */

import { decodeInstr, type Instr, newInstr } from "../decode/_opcodes.ts";
import { OP, TYPE } from "../decode/_op.ts";
import { invalid, type Reader } from "../decode/_reader.ts";
import type { Writer } from "../encode/_writer.ts";
import type { DepthSlots } from "../encode/_emit.ts";

/** Flat fuel charged for a bulk memory/table operation or a grow, besides its length. */
export const BULK_COST = 64;

/** How function bodies are rewritten. */
export interface CodeContext {
  /** Function imports in the original module; indices at or above shift. */
  funcImports: number;
  /** How many function imports were added. */
  shift: number;
  /** Fuel global and `out_of_fuel` function index, when metering. */
  fuel: { global: number; outOfFuel: number } | null;
  /** Depth global, limit and `stack_exhausted` function index, when bounding depth. */
  depth: DepthSlots | null;
  /**
   * Per memory, the index of the helper that replaces `memory.grow` and calls
   * `hookbox.grow_failed` when the grow fails; null when not signalling.
   */
  grow: number[] | null;
  /** Per memory, whether it is 64-bit (its bulk operations take an i64 length). */
  mem64: boolean[];
  /** Write tracking of memory `memory` into the block map memory `map`, when on. */
  writes: { memory: number; map: number } | null;
  /**
   * Set while rewriting: a body uses exception handling (`try`, `try_table`);
   * a body names a data segment (`memory.init`, `data.drop`).
   */
  seen: { exceptions: boolean; dataIndices: boolean };
}

/** Per-function facts the rewriter needs. */
export interface FuncShape {
  params: number;
  /** Exported or the start function: the host can call it directly. */
  entry: boolean;
  /** Encoded block type of the function's results. */
  blockType: number[];
}

/** Maps an original function index to its index in the rewritten module. */
export function remapFunc(ctx: CodeContext, index: number): number {
  return index < ctx.funcImports ? index : index + ctx.shift;
}

/** Copies input to output lazily, so unchanged runs are copied in one go. */
export class Copier {
  pending: number;
  constructor(readonly r: Reader, readonly w: Writer) {
    this.pending = r.pos;
  }
  /** Flushes untouched input up to `to`. */
  flush(to: number): void {
    if (to > this.pending) this.w.bytes(this.r.bytes.subarray(this.pending, to));
    this.pending = to;
  }
  /** Replaces a function-index immediate that starts at `instr.funcAt` and ends at `r.pos`. */
  remap(instr: Instr, ctx: CodeContext): void {
    const index = remapFunc(ctx, instr.func);
    if (index === instr.func) return;
    this.flush(instr.funcAt);
    this.w.u32(index);
    this.pending = this.r.pos;
  }
}

/** Rewrites a constant expression (renumbering `ref.func`), through its `end`. */
export function rewriteConstExpr(r: Reader, w: Writer, ctx: CodeContext): void {
  const c = new Copier(r, w);
  const instr: Instr = newInstr();
  do {
    decodeInstr(r, instr);
    if (instr.funcAt >= 0) c.remap(instr, ctx);
  } while (instr.op !== OP.end);
  c.flush(r.pos);
}

/**
 * Reads the locals vector and writes it back with `extra` groups appended.
 * Returns the index of the first appended local.
 */
export function copyLocals(
  r: Reader,
  w: Writer,
  params: number,
  extra: [number, number][],
): number {
  const groups: Uint8Array[] = [];
  let count = params;
  for (let n = r.u32(); n > 0; n--) {
    const start = r.pos;
    count += r.u32();
    r.u8();
    groups.push(r.bytes.subarray(start, r.pos));
  }
  if (count > 50_000) invalid(`too many locals (${count})`, r.pos);
  w.u32(groups.length + extra.length);
  for (const g of groups) w.bytes(g);
  for (const [n, type] of extra) w.u32(n).u8(type);
  return count;
}

/** The fuel locals: the fuel copy (i64), then an i64 and an i32 scratch for bulk-op lengths. */
export const FUEL_LOCALS: [number, number][] = [[2, TYPE.i64], [1, TYPE.i32]];
/** How many locals {@linkcode FUEL_LOCALS} adds. */
export const FUEL_LOCAL_COUNT = 3;

export { rewriteBody } from "./_body.ts";
