/**
 * Write tracking: after every instruction that writes the tracked memory, the
 * rewriter marks the 4 KiB pages it wrote in a second, host-owned memory (one
 * byte per page). The host then restores only marked pages between calls
 * instead of the whole memory.
 *
 * A marked page stands for its 4096 bytes plus the first 16 bytes of the next
 * page, so a store that straddles a page boundary (16 bytes at most) needs one
 * mark. Bulk operations mark every page of their destination range.
 *
 * @module
 */

import type { Instr } from "./_opcodes.ts";
import type { Writer } from "./_writer.ts";

/** log2 of the tracked page size. */
export const PAGE_SHIFT = 12;
/** Bytes past a marked page that the mark also covers (the widest store). */
export const STRADDLE = 16;

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
  /** The page map memory. */
  map: number;
  /** First of the scratch locals (see {@linkcode writeLocals}). */
  local: number;
}

const I32 = 0x7f;
const I64 = 0x7e;
const F32 = 0x7d;
const F64 = 0x7c;
const V128 = 0x7b;

/** Value types of the atomic stores / read-modify-writes, by `(sub - 0x17) % 7`. */
const ATOMIC_TYPES: ("i32" | "i64")[] = ["i32", "i64", "i32", "i32", "i64", "i64", "i64"];

/**
 * What `instr` writes to memory `memory`, or null when it writes nothing
 * there.
 */
export function writeKind(instr: Instr, memory: number): WriteKind | null {
  const op = instr.op;
  if (op >= 0x36 && op <= 0x3e) {
    if (instr.mem !== memory) return null;
    if (op === 0x38) return "f32";
    if (op === 0x39) return "f64";
    return op === 0x36 || op === 0x3a || op === 0x3b ? "i32" : "i64";
  }
  if (op === 0xfd) {
    const sub = instr.sub;
    const store = sub === 11 || (sub >= 88 && sub <= 91);
    return store && instr.mem === memory ? "v128" : null;
  }
  if (op === 0xfe) {
    const sub = instr.sub;
    if (sub < 0x17 || sub > 0x4e || instr.mem !== memory) return null;
    const type = ATOMIC_TYPES[(sub - 0x17) % 7]!;
    if (sub >= 0x48) return type === "i32" ? "cmpxchg_i32" : "cmpxchg_i64";
    return type;
  }
  if (op === 0xfc && (instr.sub === 8 || instr.sub === 10 || instr.sub === 11)) {
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
  const groups: [number, number][] = [[3, I32], [2, I64], [1, F32], [1, F64]];
  if (v128) groups.push([1, V128]);
  return groups;
}

const LOCAL_GET = 0x20;
const LOCAL_SET = 0x21;
const LOCAL_TEE = 0x22;

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
export function emitBeforeWrite(w: Writer, kind: WriteKind, s: WriteSlots): void {
  const values = valueLocals(kind, s.local);
  for (let i = values.length - 1; i >= 0; i--) w.u8(LOCAL_SET).u32(values[i]!);
  w.u8(LOCAL_TEE).u32(s.local);
  for (const v of values) w.u8(LOCAL_GET).u32(v);
}

/** Emits the code that goes after the write: marks the page(s) it wrote. */
export function emitAfterWrite(w: Writer, kind: WriteKind, offset: number, s: WriteSlots): void {
  const address = s.local;
  if (kind === "bulk") return emitMarkRange(w, address, s.local + 2, s.map);
  w.u8(LOCAL_GET).u32(address);
  // The write succeeded, so address + offset is in bounds and does not wrap.
  if (offset !== 0) w.u8(0x41).signed(offset | 0).u8(0x6a); // i32.const, i32.add
  w.u8(0x41).u8(PAGE_SHIFT).u8(0x76); // i32.shr_u
  w.u8(0x41).u8(1);
  w.u8(0x3a).u8(0x40).u32(s.map).u8(0); // i32.store8 into the map memory, offset 0
}

/** `memory.fill map (start >> 12) 1 (((start + len + 4095) >> 12) - (start >> 12))`. */
function emitMarkRange(w: Writer, start: number, length: number, map: number): void {
  const page = () => w.u8(0x41).u8(PAGE_SHIFT).u8(0x76);
  w.u8(LOCAL_GET).u32(start);
  page();
  w.u8(0x41).u8(1);
  w.u8(LOCAL_GET).u32(start).u8(LOCAL_GET).u32(length).u8(0x6a);
  w.u8(0x41).signed((1 << PAGE_SHIFT) - 1).u8(0x6a);
  page();
  w.u8(LOCAL_GET).u32(start);
  page();
  w.u8(0x6b); // i32.sub
  w.u8(0xfc).u32(11).u32(map); // memory.fill
}
