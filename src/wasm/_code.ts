/**
 * Rewrites function bodies and constant expressions: renumbers function
 * indices after imports were added, inserts fuel charges at function entry and
 * loop headers, and (optionally) maintains a call-depth counter.
 *
 * Fuel accounting is per basic block: every straight-line run of code (from
 * function entry, or after `block`, `loop`, `if`, `else`, `end`, `br_if`,
 * `try`, `catch`) is charged its static instruction count when it starts
 * (bulk memory/table ops cost {@linkcode BULK_COST} plus their length / 16,
 * charged at run time just before they execute). Only function entries and
 * loop headers also check the counter and call `out_of_fuel` when it is
 * negative — every unbounded execution passes one of those, so a runaway is
 * stopped within one basic block's worth of overdraft per frame, while the
 * count stays close to the instructions actually executed (code after an
 * unconditional branch up to the next `end`/`else` is the only overcharge).
 *
 * That holds for functions with loops, which keep fuel in an i64 local
 * (synchronised with the exported global around calls, throws and exits) so
 * hot code touches no memory. A loop-free function runs each instruction at
 * most once per call, so it is charged its whole static cost once at entry,
 * on the global (an upper bound by at most its own size), and checks the
 * counter only when it makes calls or is an entry point (export, start).
 *
 * When a local copy or the depth counter is used, the body is wrapped in a block with the
 * function's results so that every exit (`return`, a branch to the function
 * label, falling off the end) passes through one epilogue.
 *
 * @module
 */

import { BULK_SUBS, decodeInstr, type Instr, newInstr, OPENERS } from "./_opcodes.ts";
import { invalid, Reader } from "./_reader.ts";
import type { Writer } from "./_writer.ts";
import * as X from "./_emit.ts";
import * as T from "./_writes.ts";

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
  depth: X.DepthSlots | null;
  /**
   * Per memory, the index of the helper that replaces `memory.grow` and calls
   * `hookbox.grow_failed` when the grow fails; null when not signalling.
   */
  grow: number[] | null;
  /** Per memory, whether it is 64-bit (its bulk operations take an i64 length). */
  mem64: boolean[];
  /** Write tracking of memory `memory` into the page map memory `map`, when on. */
  writes: { memory: number; map: number } | null;
  /** Set while rewriting: a body uses exception handling (`try`, `try_table`). */
  seen: { exceptions: boolean };
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
  const instr: Instr = newInstr();
  do {
    decodeInstr(r, instr);
    if (instr.funcAt >= 0) c.remap(instr, ctx);
  } while (instr.op !== 0x0b);
  c.flush(r.pos);
}

/**
 * Reads the locals vector and writes it back with `extra` groups appended.
 * Returns the index of the first appended local.
 */
function copyLocals(r: Reader, w: Writer, params: number, extra: [number, number][]): number {
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
const FUEL_LOCALS: [number, number][] = [[2, 0x7e], [1, 0x7f]];

/** What a function body contains that decides how it is rewritten. */
interface BodyScan {
  /** Loops or bulk operations (charged by length through the fuel local). */
  loops: boolean;
  calls: boolean;
  /** Writes to the tracked memory, and whether any of them stores a v128. */
  writes: boolean;
  v128: boolean;
}

function scanBody(r: Reader, ctx: CodeContext): BodyScan {
  const scan = r.sub(0);
  scan.end = r.end;
  const instr: Instr = newInstr();
  const out: BodyScan = { loops: false, calls: false, writes: false, v128: false };
  const tracked = ctx.writes;
  while (!scan.done) {
    decodeInstr(scan, instr);
    // Loops, and bulk operations (charged by length through the local), need the local copy.
    if (instr.op === 0x03 || (instr.op === 0xfc && BULK_SUBS.has(instr.sub))) {
      out.loops = out.calls = true;
      if (tracked === null) return out;
    }
    if (instr.op >= 0x10 && instr.op <= 0x15) out.calls = true;
    if (tracked !== null) {
      const kind = T.writeKind(instr, tracked.memory);
      if (kind !== null) out.writes = true;
      if (kind === "v128") out.v128 = true;
    }
  }
  return out;
}

/**
 * The length operand type of a bulk memory/table operation starting at `at`
 * (0xfc prefix), or null when it is not one: memory.fill/copy on 64-bit
 * memories take an i64 length, everything else an i32.
 */
function bulkLength(r: Reader, at: number, sub: number, ctx: CodeContext): "i32" | "i64" {
  const imm = new Reader(r.bytes, at + 1, r.pos);
  imm.u32(); // the sub-opcode
  if (sub === 11) return ctx.mem64[imm.u32()] ? "i64" : "i32"; // memory.fill mem
  if (sub === 10) return ctx.mem64[imm.u32()] && ctx.mem64[imm.u32()] ? "i64" : "i32"; // copy dst src
  return "i32";
}

/**
 * The fuel segments of a function being rewritten. A segment with a check
 * (function entry, loop header) is emitted at once; a plain one is opened
 * lazily, right before the next instruction that is not itself a block
 * boundary, so runs of `end`/`br_if` emit no empty charges.
 */
class Segments {
  #patchAt = -1;
  #cost = 0;
  #pending = false;
  constructor(readonly w: Writer, readonly fuel: X.FuelSlots | null) {}
  /** Starts a segment with a check (function entry, loop headers). */
  openChecked(atEntry = false): void {
    if (!this.fuel) return;
    this.#patchAt = X.emitCharge(this.w, this.fuel, atEntry);
    this.#cost = 0;
    this.#pending = false;
  }
  /** Emits the charge of a lazily opened segment; call before copying an instruction. */
  materialise(): void {
    if (!this.#pending || !this.fuel) return;
    this.#patchAt = X.emitSub(this.w, this.fuel);
    this.#cost = 0;
    this.#pending = false;
  }
  get pending(): boolean {
    return this.#pending;
  }
  add(cost: number): void {
    this.#cost += cost;
  }
  /** Ends the segment: its charge becomes the cost of the instructions it covered. */
  close(): void {
    if (this.#patchAt >= 0) this.w.patchSigned5(this.#patchAt, this.#cost);
    this.#patchAt = -1;
  }
  /** Closes the current segment; the next one starts here (checked) or lazily. */
  next(check: boolean): void {
    this.close();
    if (check) this.openChecked();
    else this.#pending = true;
  }
}

/** Instructions after which straight-line code starts again (a new basic block). */
const SPLITS = new Set([0x02, 0x03, 0x04, 0x05, 0x06, 0x0b, 0x0d, 0x18, 0x1f]);

/** Rewrites one function body (locals + expression) from `r` into `w`. */
export function rewriteBody(r: Reader, w: Writer, ctx: CodeContext, fn: FuncShape): void {
  const localStart = r.pos;
  for (let n = r.u32(); n > 0; n--) void (r.u32(), r.u8());
  const shape = scanBody(r, ctx);
  r.pos = localStart;
  const useLocal = ctx.fuel !== null && shape.loops;
  const checked = shape.calls || fn.entry;
  const fuelLocals = ctx.fuel !== null && (useLocal || checked);
  const tracked = ctx.writes !== null && shape.writes ? ctx.writes : null;
  const extra = [
    ...(fuelLocals ? FUEL_LOCALS : []),
    ...(tracked ? T.writeLocals(shape.v128) : []),
  ];
  const local = copyLocals(r, w, fn.params, extra);
  const fuel = useLocal ? { ...ctx.fuel!, local } : null;
  const writes = tracked ? { map: tracked.map, local: local + (fuelLocals ? 3 : 0) } : null;
  const depth = ctx.depth;
  const wrapped = fuel !== null || depth !== null;
  const segments = new Segments(w, fuel);
  if (depth) X.emitDepthEnter(w, depth);
  // Loop-free functions: one upfront charge of the whole body on the global,
  // checked only when the function calls out (recursion is the only way back)
  // or the host can enter it directly.
  const upfront = ctx.fuel && !useLocal ? X.emitGlobalCharge(w, ctx.fuel, checked, local) : -1;
  let upfrontCost = 0;
  segments.openChecked(true);
  if (wrapped) w.u8(0x02).bytes(new Uint8Array(fn.blockType));
  const c = new Copier(r, w);
  const blocks: number[] = [];
  const instr: Instr = newInstr();
  for (;;) {
    const at = r.pos;
    decodeInstr(r, instr);
    const op = instr.op;
    if (op === 0x06 || op === 0x1f) ctx.seen.exceptions = true;
    if (segments.pending && !SPLITS.has(op) && op !== 0x07 && op !== 0x19) {
      c.flush(at);
      segments.materialise();
    }
    const bulk = op === 0xfc && BULK_SUBS.has(instr.sub);
    segments.add(bulk ? BULK_COST : 1);
    upfrontCost += bulk ? BULK_COST : 1;
    if (bulk && fuel) { // plus one unit per 16 bytes/elements, charged before it runs
      c.flush(at);
      X.emitLengthCharge(w, fuel, bulkLength(r, at, instr.sub, ctx));
    }
    if (op === 0x40 && ctx.grow) { // memory.grow -> call the memory's grow helper
      c.flush(at);
      const memory = new Reader(r.bytes, at + 1, r.pos).u32();
      const helper = ctx.grow[memory];
      if (helper === undefined) invalid(`memory.grow of unknown memory ${memory}`, at);
      w.u8(0x10).u32(helper);
      c.pending = r.pos;
      continue;
    }
    if (OPENERS.has(op)) blocks.push(op);
    if ((op === 0x0b || op === 0x18) && blocks.pop() === undefined) {
      if (op === 0x18) invalid("delegate outside try", at);
      break;
    }
    if (SPLITS.has(op)) {
      c.flush(r.pos);
      segments.next(op === 0x03);
      continue;
    }
    const write = writes && T.writeKind(instr, tracked!.memory);
    if (write) { // save the address, write, then mark the page(s) written
      c.flush(at);
      T.emitBeforeWrite(w, write, writes!);
      c.flush(r.pos);
      T.emitAfterWrite(w, write, instr.offset, writes!);
      continue;
    }
    if (!wrapped) {
      if (instr.funcAt >= 0) c.remap(instr, ctx);
      continue;
    }
    if (op === 0x10 || op === 0x11 || op === 0x14) { // calls: publish fuel, then reload
      c.flush(at);
      if (fuel) X.emitFuelStore(w, fuel);
      if (instr.funcAt >= 0) c.remap(instr, ctx);
      c.flush(r.pos);
      if (fuel) X.emitFuelLoad(w, fuel);
    } else if (op === 0x12 || op === 0x13 || op === 0x15) { // tail calls leave the frame
      c.flush(at);
      if (fuel) X.emitFuelStore(w, fuel);
      if (depth) X.emitDepthLeave(w, depth);
      if (instr.funcAt >= 0) c.remap(instr, ctx);
    } else if (op === 0x0f) { // return -> branch to the wrapper block
      c.flush(at);
      w.u8(0x0c).u32(blocks.length);
      c.pending = r.pos;
    } else if (fuel && (op === 0x08 || op === 0x09 || op === 0x0a)) { // throws
      c.flush(at);
      X.emitFuelStore(w, fuel);
    } else if (fuel && (op === 0x07 || op === 0x19)) { // catch handlers start a block
      c.flush(r.pos);
      X.emitFuelLoad(w, fuel);
      segments.next(false);
    } else if (instr.funcAt >= 0) c.remap(instr, ctx);
  }
  if (!r.done) invalid("bytes after the end of a function body", r.pos);
  segments.close();
  if (upfront >= 0) w.patchSigned5(upfront, upfrontCost);
  c.flush(r.pos - 1); // everything before the function's final `end`
  if (wrapped) w.u8(0x0b);
  if (fuel) X.emitFuelStore(w, fuel);
  if (depth) X.emitDepthLeave(w, depth);
  w.u8(0x0b);
}
