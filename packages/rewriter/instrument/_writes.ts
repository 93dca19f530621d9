/**
 * Write tracking: after every instruction that writes the tracked memory, the
 * rewriter marks the 256-byte blocks it wrote in a second,
 * host-owned memory (one byte per block). The host then restores only marked
 * blocks between calls instead of the whole memory. Blocks this small keep
 * what a call restores close to what it wrote: a JS hook's call writes a few
 * bytes in many places (4 KiB blocks restored about six times as much).
 *
 * A marked block stands for its 256 bytes plus the first 16 bytes of the next
 * block, so a store that straddles a block boundary (16 bytes at most) needs one
 * mark. Bulk operations mark every block of their destination range.
 *
 * @module
 */

import type { Emitter } from "../encode/_emitter.ts";
import type { Instr } from "../decode/_opcodes.ts";
import { ATOMIC, MISC, OP, SIMD, TYPE } from "../decode/_op.ts";

/** log2 of the tracked block size: 256 bytes. */
export const BLOCK_SHIFT = 8;
/** Bytes past a marked block that the mark also covers (the widest store). */
export const STRADDLE = 16;

/**
 * Pages of the block map that tracks writes to a memory of at most
 * `maxPages` pages: one byte per 256-byte block, and one more for the end of
 * a bulk write that reaches the memory's last byte.
 */
export function blockMapPages(maxPages: number): number {
  return Math.floor(maxPages * (65536 >> BLOCK_SHIFT) / 65536) + 1;
}

/** Operand shape of a write: the value type(s) above the address on the stack. */
export type WriteKind =
  | "i32"
  | "i64"
  | "f32"
  | "f64"
  | "v128"
  | "cmpxchg_i32"
  | "cmpxchg_i64"
  | "bulk";

/** Indices the inserted code uses. */
export interface WriteSlots {
  /** The block map memory. */
  map: number;
  /** First of the scratch locals (see {@linkcode writeLocals}). */
  local: number;
}

/** Value types of the atomic stores / read-modify-writes, by `(sub - ATOMIC.firstWrite) % 7`. */
const ATOMIC_TYPES: ("i32" | "i64")[] = ["i32", "i64", "i32", "i32", "i64", "i64", "i64"];

/**
 * What `instr` writes to memory `memory`, or null when it writes nothing
 * there.
 */
export function writeKind(instr: Instr, memory: number): WriteKind | null {
  const op = instr.op;
  if (op >= OP.i32Store && op <= OP.i64Store32) {
    if (instr.mem !== memory) return null;
    if (op === OP.f32Store) return "f32";
    if (op === OP.f64Store) return "f64";
    return op === OP.i32Store || op === OP.i32Store8 || op === OP.i32Store16 ? "i32" : "i64";
  }
  if (op === OP.simd) {
    const sub = instr.sub;
    const store = sub === SIMD.v128Store ||
      (sub >= SIMD.firstStoreLane && sub <= SIMD.lastStoreLane);
    return store && instr.mem === memory ? "v128" : null;
  }
  if (op === OP.atomic) {
    const sub = instr.sub;
    if (sub < ATOMIC.firstWrite || sub > ATOMIC.last || instr.mem !== memory) return null;
    const type = ATOMIC_TYPES[(sub - ATOMIC.firstWrite) % 7]!;
    if (sub >= ATOMIC.firstCmpxchg) return type === "i32" ? "cmpxchg_i32" : "cmpxchg_i64";
    return type;
  }
  const bulk = instr.sub === MISC.memoryInit || instr.sub === MISC.memoryCopy ||
    instr.sub === MISC.memoryFill;
  if (op === OP.misc && bulk) {
    return instr.mem === memory ? "bulk" : null;
  }
  return null;
}

/**
 * The scratch locals a function with writes gets, in order: three i32 (the
 * address, then two operands), two i64, one f32, one f64, and a v128 when the
 * function stores vectors.
 */
export function writeLocals(v128: boolean): [count: number, type: number][] {
  const groups: [number, number][] = [[3, TYPE.i32], [2, TYPE.i64], [1, TYPE.f32], [1, TYPE.f64]];
  if (v128) groups.push([1, TYPE.v128]);
  return groups;
}

/** Scratch local holding the first (and second) value operand of each kind. */
function valueLocals(kind: WriteKind, base: number): number[] {
  switch (kind) {
    case "i32":
      return [base + 1];
    case "i64":
      return [base + 3];
    case "f32":
      return [base + 5];
    case "f64":
      return [base + 6];
    case "v128":
      return [base + 7];
    case "cmpxchg_i32":
    case "bulk":
      return [base + 1, base + 2];
    case "cmpxchg_i64":
      return [base + 3, base + 4];
  }
}

/**
 * Emits the code that goes before the write: pops its value operands into
 * scratch locals, saves the address, and pushes the operands back.
 */
export function emitBeforeWrite(e: Emitter, kind: WriteKind, s: WriteSlots): void {
  const values = valueLocals(kind, s.local);
  for (let i = values.length - 1; i >= 0; i--) e.localSet(values[i]!);
  e.localTee(s.local);
  for (const v of values) e.localGet(v);
}

/** Emits the code that goes after the write: marks the block(s) it wrote. */
export function emitAfterWrite(e: Emitter, kind: WriteKind, offset: number, s: WriteSlots): void {
  const address = s.local;
  if (kind === "bulk") return emitMarkRange(e, address, s.local + 2, s.map);
  e.localGet(address);
  // The write succeeded, so address + offset is in bounds and does not wrap.
  if (offset !== 0) e.i32Const(offset).op(OP.i32Add);
  e.i32Const(BLOCK_SHIFT).op(OP.i32ShrU);
  e.i32Const(1).i32Store8(s.map);
}

/** `memory.fill map (start >> 12) 1 (((start + len + 4095) >> 12) - (start >> 12))`. */
function emitMarkRange(e: Emitter, start: number, length: number, map: number): void {
  const block = () => e.i32Const(BLOCK_SHIFT).op(OP.i32ShrU);
  e.localGet(start);
  block();
  e.i32Const(1);
  e.localGet(start).localGet(length).op(OP.i32Add);
  e.i32Const((1 << BLOCK_SHIFT) - 1).op(OP.i32Add);
  block();
  e.localGet(start);
  block();
  e.op(OP.i32Sub);
  e.memoryFill(map);
}
