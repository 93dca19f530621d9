/**
 * Rewrites one function body: renumbers function indices, inserts fuel
 * charges and checks, keeps the call-depth counter, and marks written blocks.
 *
 * Fuel accounting is per basic block: every straight-line run of code (from
 * function entry, or after `block`, `loop`, `if`, `else`, `end`, `br_if`,
 * `try`, `catch`) is charged its static instruction count when it starts.
 * Checks (`out_of_fuel` when the counter is negative) sit at every function
 * entry and loop header — every unbounded execution passes one of those — and
 * right before every operation whose cost depends on an operand: bulk
 * memory/table operations and `table.grow` are charged {@linkcode BULK_COST}
 * plus their length (one unit per 16 bytes, or per table element) before they
 * run, and that charge is checked, so no sequence of them in straight-line
 * code outruns the budget. (`memory.grow` costs the host no work per page:
 * engines reserve the address space and the cap bounds it; writes to the new
 * pages are charged as they happen.)
 *
 * Functions with loops or length-charged operations keep fuel in an i64 local
 * (synchronised with the exported global around calls, throws and exits) so
 * hot code touches no memory. A loop-free function runs each instruction at
 * most once per call, so it is charged its whole static cost once at entry,
 * on the global, and that charge is checked: no chain of calls runs more than
 * one function body past a check.
 *
 * The local is never above the global except where a `try_table` catch
 * clause lands after a callee threw (the callee spent fuel from the global);
 * in functions with `try_table` every label continuation takes the smaller of
 * the two, so catching an exception never refunds fuel.
 *
 * When a local copy or the depth counter is used, the body is wrapped in a
 * block with the function's results so that every exit (`return`, a branch to
 * the function label, falling off the end) passes through one epilogue.
 *
 * @module
 */

import {
  BULK_COST,
  type CodeContext,
  Copier,
  copyLocals,
  FUEL_LOCAL_COUNT,
  FUEL_LOCALS,
  type FuncShape,
} from "./_code.ts";
import * as X from "../encode/_emit.ts";
import type { Emitter } from "../encode/_emitter.ts";
import { decodeInstr, type Instr, newInstr, OPENERS } from "../decode/_opcodes.ts";
import { MISC, OP, TYPE } from "../decode/_op.ts";
import { invalid, Reader } from "../decode/_reader.ts";
import * as T from "./_writes.ts";

/** What a function body contains that decides how it is rewritten. */
interface BodyScan {
  /** Loops or length-charged operations: fuel is kept in a local. */
  loops: boolean;
  /** `try_table`: label continuations take min(local, global). */
  tryTable: boolean;
  /** `try` or `try_table`: the function may resume after a callee threw. */
  catches: boolean;
  /** Writes to the tracked memory, and whether any of them stores a v128. */
  writes: boolean;
  v128: boolean;
}

/** The unit in which an operation's length operand is charged, or null for a fixed cost. */
export function chargeUnit(instr: Instr): X.LengthUnit | null {
  if (instr.op !== OP.misc) return null;
  switch (instr.sub) {
    case MISC.memoryInit:
    case MISC.memoryCopy:
    case MISC.memoryFill:
      return "bytes";
    case MISC.tableInit:
    case MISC.tableCopy:
    case MISC.tableFill:
    case MISC.tableGrow:
      return "elements";
  }
  return null;
}

function scanBody(r: Reader, ctx: CodeContext): BodyScan {
  const scan = new Reader(r.bytes, r.pos, r.end);
  const instr: Instr = newInstr();
  const out: BodyScan = {
    loops: false,
    tryTable: false,
    catches: false,
    writes: false,
    v128: false,
  };
  const tracked = ctx.writes;
  while (!scan.done) {
    decodeInstr(scan, instr);
    if (instr.op === OP.loop || chargeUnit(instr) !== null) out.loops = true;
    if (instr.op === OP.tryTable) out.tryTable = true;
    if (instr.op === OP.tryTable || instr.op === OP.try) out.catches = true;
    if (tracked !== null) {
      const kind = T.writeKind(instr, tracked.memory);
      if (kind !== null) out.writes = true;
      if (kind === "v128") out.v128 = true;
    }
  }
  return out;
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
  constructor(readonly e: Emitter, readonly fuel: X.FuelSlots | null) {}
  /** Starts a segment with a check (function entry, loop headers). */
  openChecked(atEntry = false): void {
    if (!this.fuel) return;
    this.#patchAt = X.emitCharge(this.e, this.fuel, atEntry);
    this.#cost = 0;
    this.#pending = false;
  }
  /** Emits the charge of a lazily opened segment; call before copying an instruction. */
  materialise(): void {
    if (!this.#pending || !this.fuel) return;
    this.#patchAt = X.emitSub(this.e, this.fuel);
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
    if (this.#patchAt >= 0) this.e.patchSigned5(this.#patchAt, this.#cost);
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
const SPLITS = new Set<number>([
  OP.block,
  OP.loop,
  OP.if,
  OP.else,
  OP.try,
  OP.end,
  OP.brIf,
  OP.delegate,
  OP.tryTable,
]);

/** Rewrites one function body (locals + expression) from `r` into `e`. */
export function rewriteBody(r: Reader, e: Emitter, ctx: CodeContext, fn: FuncShape): void {
  new BodyRewriter(r, e, ctx, fn).run();
}

class BodyRewriter {
  readonly #r: Reader;
  readonly #e: Emitter;
  readonly #ctx: CodeContext;
  readonly #fn: FuncShape;
  readonly #c: Copier;
  /** Fuel slots when fuel is kept in a local, else null. */
  #fuel: X.FuelSlots | null = null;
  #writes: T.WriteSlots | null = null;
  #tryTable = false;
  /**
   * The function's own call depth, kept in a local when it can catch: a callee
   * that throws never runs its `depth -= 1`, so wherever the function resumes
   * (a label continuation, a handler, the exit) the counter is set back.
   */
  #depthLocal: number | null = null;
  #wrapped = false;
  #segments!: Segments;
  /** Offset of the loop-free upfront charge's immediate, and the cost it covers. */
  #upfront = -1;
  #upfrontCost = 0;
  readonly #blocks: number[] = [];

  constructor(r: Reader, e: Emitter, ctx: CodeContext, fn: FuncShape) {
    this.#r = r;
    this.#e = e;
    this.#ctx = ctx;
    this.#fn = fn;
    this.#c = new Copier(r, e);
  }

  run(): void {
    this.#prologue();
    const instr: Instr = newInstr();
    for (;;) {
      const at = this.#r.pos;
      decodeInstr(this.#r, instr);
      if (this.#instruction(instr, at)) break;
    }
    this.#epilogue();
  }

  #prologue(): void {
    const r = this.#r;
    const ctx = this.#ctx;
    const localStart = r.pos;
    for (let n = r.u32(); n > 0; n--) void (r.u32(), r.u8());
    const shape = scanBody(r, ctx);
    r.pos = localStart;
    const tracked = ctx.writes !== null && shape.writes ? ctx.writes : null;
    const extra = [
      ...(ctx.fuel !== null ? FUEL_LOCALS : []),
      ...(tracked ? T.writeLocals(shape.v128) : []),
    ];
    const depthAt = extra.reduce((n, [count]) => n + count, 0);
    if (ctx.depth !== null && shape.catches) extra.push([1, TYPE.i32]);
    const local = copyLocals(r, this.#e, this.#fn.params, extra);
    this.#depthLocal = ctx.depth !== null && shape.catches ? local + depthAt : null;
    this.#c.pending = r.pos;
    const useLocal = ctx.fuel !== null && shape.loops;
    this.#fuel = useLocal ? { ...ctx.fuel!, local } : null;
    this.#tryTable = shape.tryTable;
    if (tracked) {
      const after = ctx.fuel !== null ? FUEL_LOCAL_COUNT : 0;
      this.#writes = { map: tracked.map, local: local + after };
    }
    this.#wrapped = useLocal || ctx.depth !== null;
    this.#segments = new Segments(this.#e, this.#fuel);
    if (ctx.depth) X.emitDepthEnter(this.#e, ctx.depth);
    if (ctx.depth && this.#depthLocal !== null) {
      this.#e.globalGet(ctx.depth.global).localSet(this.#depthLocal);
    }
    // Loop-free functions: one checked upfront charge of the whole body on the global.
    if (ctx.fuel && !useLocal) this.#upfront = X.emitGlobalCharge(this.#e, ctx.fuel, local);
    this.#segments.openChecked(true);
    if (this.#wrapped) this.#e.block(this.#fn.blockType);
  }

  /** Handles one decoded instruction; true at the function's final `end`. */
  #instruction(instr: Instr, at: number): boolean {
    const op = instr.op;
    if (op === OP.try || op === OP.tryTable) this.#ctx.seen.exceptions = true;
    if (op === OP.misc && (instr.sub === MISC.memoryInit || instr.sub === MISC.dataDrop)) {
      this.#ctx.seen.dataIndices = true;
    }
    const segments = this.#segments;
    if (segments.pending && !SPLITS.has(op) && op !== OP.catch && op !== OP.catchAll) {
      this.#c.flush(at);
      segments.materialise();
    }
    const unit = chargeUnit(instr);
    const cost = unit === null ? 1 : BULK_COST;
    segments.add(cost);
    this.#upfrontCost += cost;
    if (unit !== null && this.#fuel) {
      this.#c.flush(at);
      X.emitLengthCharge(this.#e, this.#fuel, this.#lengthType(instr, at), unit);
    }
    if (op === OP.memoryGrow && this.#ctx.grow) return this.#grow(at);
    if (OPENERS.has(op)) this.#blocks.push(op);
    if ((op === OP.end || op === OP.delegate) && this.#blocks.pop() === undefined) {
      if (op === OP.delegate) invalid("delegate outside try", at);
      return true;
    }
    if (SPLITS.has(op)) return this.#split(op);
    const write = this.#writes && T.writeKind(instr, this.#ctx.writes!.memory);
    if (write) return this.#write(write, instr, at);
    if (!this.#wrapped) {
      if (instr.funcAt >= 0) this.#c.remap(instr, this.#ctx);
      return false;
    }
    this.#control(instr, at);
    return false;
  }

  /** The type of a length operand: i64 for memory.fill/copy on 64-bit memories. */
  #lengthType(instr: Instr, at: number): "i32" | "i64" {
    const mem64 = this.#ctx.mem64;
    const imm = new Reader(this.#r.bytes, at + 1, this.#r.pos);
    imm.u32(); // the sub-opcode
    if (instr.sub === MISC.memoryFill) return mem64[imm.u32()] ? "i64" : "i32";
    if (instr.sub === MISC.memoryCopy) return mem64[imm.u32()] && mem64[imm.u32()] ? "i64" : "i32";
    return "i32";
  }

  /** memory.grow → a call to the memory's grow helper, which reports a failed grow. */
  #grow(at: number): boolean {
    this.#c.flush(at);
    const memory = new Reader(this.#r.bytes, at + 1, this.#r.pos).u32();
    const helper = this.#ctx.grow![memory];
    if (helper === undefined) invalid(`memory.grow of unknown memory ${memory}`, at);
    this.#e.call(helper);
    this.#c.pending = this.#r.pos;
    return false;
  }

  /** A block boundary: a new segment starts (checked at loop headers). */
  #split(op: number): boolean {
    this.#c.flush(this.#r.pos);
    const fuel = this.#fuel;
    if (fuel && this.#tryTable && (op === OP.end || op === OP.loop)) X.emitFuelMin(this.#e, fuel);
    if (op === OP.end || op === OP.loop) this.#restoreDepth();
    this.#segments.next(op === OP.loop);
    return false;
  }

  /** A store, atomic write or bulk write to the tracked memory: mark its blocks. */
  #write(kind: T.WriteKind, instr: Instr, at: number): boolean {
    const slots = this.#writes!;
    this.#c.flush(at);
    T.emitBeforeWrite(this.#e, kind, slots);
    this.#c.flush(this.#r.pos);
    T.emitAfterWrite(this.#e, kind, instr.offset, slots);
    return false;
  }

  /** Calls, returns, throws and catches in a wrapped body. */
  #control(instr: Instr, at: number): void {
    const op = instr.op;
    const c = this.#c;
    const e = this.#e;
    const fuel = this.#fuel;
    const depth = this.#ctx.depth;
    if (op === OP.call || op === OP.callIndirect || op === OP.callRef) {
      c.flush(at); // publish fuel, call, reload
      if (fuel) X.emitFuelStore(e, fuel);
      if (instr.funcAt >= 0) c.remap(instr, this.#ctx);
      c.flush(this.#r.pos);
      if (fuel) X.emitFuelLoad(e, fuel);
    } else if (op === OP.returnCall || op === OP.returnCallIndirect || op === OP.returnCallRef) {
      c.flush(at); // tail calls leave the frame
      if (fuel) X.emitFuelStore(e, fuel);
      if (depth) X.emitDepthLeave(e, depth);
      if (instr.funcAt >= 0) c.remap(instr, this.#ctx);
    } else if (op === OP.return) { // → a branch to the wrapper block
      c.flush(at);
      e.br(this.#blocks.length);
      c.pending = this.#r.pos;
    } else if (fuel && (op === OP.throw || op === OP.rethrow || op === OP.throwRef)) {
      c.flush(at);
      X.emitFuelStore(e, fuel);
    } else if (op === OP.catch || op === OP.catchAll) { // handlers start a block
      c.flush(this.#r.pos);
      if (fuel) X.emitFuelLoad(e, fuel);
      this.#restoreDepth();
      if (fuel) this.#segments.next(false);
    } else if (instr.funcAt >= 0) c.remap(instr, this.#ctx);
  }

  /** `depth = own depth`, in functions that can catch (see `#depthLocal`). */
  #restoreDepth(): void {
    const depth = this.#ctx.depth;
    if (depth === null || this.#depthLocal === null) return;
    this.#c.flush(this.#r.pos);
    this.#e.localGet(this.#depthLocal).globalSet(depth.global);
  }

  #epilogue(): void {
    const r = this.#r;
    const e = this.#e;
    if (!r.done) invalid("bytes after the end of a function body", r.pos);
    this.#segments.close();
    if (this.#upfront >= 0) e.patchSigned5(this.#upfront, this.#upfrontCost);
    this.#c.flush(r.pos - 1); // everything before the function's final `end`
    const fuel = this.#fuel;
    if (this.#wrapped) e.end();
    if (fuel) {
      if (this.#tryTable) X.emitFuelMin(e, fuel);
      X.emitFuelStore(e, fuel);
    }
    if (this.#ctx.depth && this.#depthLocal !== null) {
      e.localGet(this.#depthLocal).globalSet(this.#ctx.depth.global);
    }
    if (this.#ctx.depth) X.emitDepthLeave(e, this.#ctx.depth);
    e.end();
  }
}
