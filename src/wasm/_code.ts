/**
 * Rewrites function bodies and constant expressions: renumbers function
 * indices after imports were added, inserts fuel charges at function entry and
 * loop headers, and (optionally) maintains a call-depth counter.
 *
 * Fuel accounting: a "region" is a function body or a loop body minus nested
 * loops. Its cost is the static count of its instructions (both arms of an
 * `if` included; bulk memory/table ops cost {@linkcode BULK_COST}), charged
 * once on entry. Within a region control only moves forward, so every
 * executed instruction has been paid for: the charge is an upper bound.
 *
 * @module
 */

import { BULK_SUBS, decodeInstr, type Instr, OPENERS } from "./_opcodes.ts";
import { invalid, type Reader } from "./_reader.ts";
import type { Writer } from "./_writer.ts";

/** Flat fuel charged for memory.init/copy/fill and table.init/copy/fill. */
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
  depth: { global: number; max: number; exhausted: number } | null;
}

/** Maps an original function index to its index in the rewritten module. */
export function remapFunc(ctx: CodeContext, index: number): number {
  return index < ctx.funcImports ? index : index + ctx.shift;
}

/** Copies input to output lazily, so unchanged runs are copied in one go. */
class Copier {
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
  const instr: Instr = { op: 0, sub: -1, funcAt: -1, func: 0 };
  do {
    decodeInstr(r, instr);
    if (instr.funcAt >= 0) c.remap(instr, ctx);
  } while (instr.op !== 0x0b);
  c.flush(r.pos);
}

/**
 * Rewrites one function body (locals + expression) from `r` into `w`.
 * `wrapperType` is the encoded block type of the function's results, used
 * for the depth-counter wrapper block.
 */
export function rewriteBody(r: Reader, w: Writer, ctx: CodeContext, wrapperType: number[]): void {
  const c = new Copier(r, w);
  for (let n = r.u32(); n > 0; n--) {
    r.u32();
    r.u8();
  }
  c.flush(r.pos);
  const regions: number[][] = []; // [patchAt, cost]
  if (ctx.depth) emitDepthEnter(w, ctx.depth, wrapperType);
  if (ctx.fuel) regions.push([emitCharge(w, ctx.fuel), 0]);
  const blocks: number[] = [];
  const instr: Instr = { op: 0, sub: -1, funcAt: -1, func: 0 };
  for (;;) {
    const at = r.pos;
    decodeInstr(r, instr);
    const op = instr.op;
    const region = regions[regions.length - 1];
    if (region) region[1]! += op === 0xfc && BULK_SUBS.has(instr.sub) ? BULK_COST : 1;
    if (instr.funcAt >= 0) c.remap(instr, ctx);
    if (OPENERS.has(op)) {
      blocks.push(op);
      if (op === 0x03 && ctx.fuel) {
        c.flush(r.pos);
        regions.push([emitCharge(w, ctx.fuel), 0]);
      }
    } else if (op === 0x0b || op === 0x18) {
      const closed = blocks.pop();
      if (closed === 0x03 && ctx.fuel) closeRegion(w, regions);
      if (closed === undefined) {
        if (op === 0x18) invalid("delegate outside try", at);
        break;
      }
    } else if (ctx.depth && (op === 0x0f || op === 0x12 || op === 0x13 || op === 0x15)) {
      c.flush(at);
      if (op === 0x0f) {
        w.u8(0x0c).u32(blocks.length); // return -> br to the wrapper block
        c.pending = r.pos;
      } else emitDepthLeave(w, ctx.depth.global);
    }
  }
  if (!r.done) invalid("bytes after the end of a function body", r.pos);
  if (ctx.fuel) closeRegion(w, regions);
  if (ctx.depth) {
    c.flush(r.pos - 1); // before the function's final `end`
    w.u8(0x0b);
    emitDepthLeave(w, ctx.depth.global);
  }
  c.flush(r.pos);
}

function closeRegion(w: Writer, regions: number[][]): void {
  const [patchAt, cost] = regions.pop()!;
  w.patchSigned5(patchAt!, cost!);
}

/** Emits `fuel -= cost; if (fuel < 0) out_of_fuel()`; returns where `cost` goes. */
function emitCharge(w: Writer, fuel: { global: number; outOfFuel: number }): number {
  w.u8(0x23).u32(fuel.global).u8(0x42);
  const patchAt = w.signed5(0);
  w.u8(0x7d).u8(0x24).u32(fuel.global);
  w.u8(0x23).u32(fuel.global).u8(0x42).u8(0x00).u8(0x53);
  w.u8(0x04).u8(0x40).u8(0x10).u32(fuel.outOfFuel).u8(0x0b);
  return patchAt;
}

function emitDepthEnter(
  w: Writer,
  depth: { global: number; max: number; exhausted: number },
  wrapperType: number[],
): void {
  w.u8(0x23).u32(depth.global).u8(0x41).u8(0x01).u8(0x6a).u8(0x24).u32(depth.global);
  w.u8(0x23).u32(depth.global).u8(0x41).signed(depth.max).u8(0x4b);
  w.u8(0x04).u8(0x40).u8(0x10).u32(depth.exhausted).u8(0x0b);
  w.u8(0x02);
  for (const b of wrapperType) w.u8(b);
}

function emitDepthLeave(w: Writer, global: number): void {
  w.u8(0x23).u32(global).u8(0x41).u8(0x01).u8(0x6b).u8(0x24).u32(global);
}
