/**
 * Instruction decoder: reads one instruction, skipping its immediates exactly,
 * and reports what the rewriter cares about (function-index immediates and
 * block structure). Unknown opcodes throw `PLUGIN_INVALID` naming the opcode.
 *
 * @module
 */

import { invalid, type Reader } from "./_reader.ts";
import { readValType, readVec } from "./_module.ts";

/** What one decoded instruction means to the rewriter. */
export interface Instr {
  /** First opcode byte (0xfc/0xfd/0xfe for prefixed instructions). */
  op: number;
  /** Sub-opcode of a prefixed instruction, else -1. */
  sub: number;
  /** Offset of the function-index immediate (call, return_call, ref.func), else -1. */
  funcAt: number;
  /** The function index at `funcAt`. */
  func: number;
  /**
   * Memory index of a memory-argument instruction (loads, stores, SIMD,
   * atomics) or the destination memory of memory.init/copy/fill, else -1.
   */
  mem: number;
  /** Static offset of a memory-argument instruction. */
  offset: number;
}

/** A blank {@linkcode Instr} for {@linkcode decodeInstr} to fill. */
export function newInstr(): Instr {
  return { op: 0, sub: -1, funcAt: -1, func: 0, mem: -1, offset: 0 };
}

/** Opcodes that open a block closed by `end` (block, loop, if, try, try_table). */
export const OPENERS = new Set([0x02, 0x03, 0x04, 0x06, 0x1f]);
/** Bulk memory/table operations (0xfc sub-opcodes) charged a flat extra cost. */
export const BULK_SUBS = new Set([8, 10, 11, 12, 14, 17]);

const enum Imm {
  Invalid,
  None,
  MemArg,
  Block,
  U32,
  U32x2,
  BrTable,
  Func,
  SelectT,
  TryTable,
  I32,
  I64,
  Bytes4,
  Bytes8,
  Heap,
  Misc,
  Simd,
  Atomic,
}

const IMMEDIATES = buildTable();

function buildTable(): Uint8Array {
  const t = new Uint8Array(256); // Imm.Invalid
  const set = (kind: Imm, ...ops: number[]) => ops.forEach((op) => t[op] = kind);
  for (let op = 0x45; op <= 0xc4; op++) t[op] = Imm.None;
  for (let op = 0x28; op <= 0x3e; op++) t[op] = Imm.MemArg;
  set(Imm.None, 0x00, 0x01, 0x05, 0x0a, 0x0b, 0x0f, 0x19, 0x1a, 0x1b, 0xd1, 0xd3, 0xd5);
  set(Imm.Block, 0x02, 0x03, 0x04, 0x06);
  set(Imm.U32, 0x07, 0x08, 0x09, 0x0c, 0x0d, 0x14, 0x15, 0x18, 0x3f, 0x40, 0xd4, 0xd6);
  set(Imm.U32, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26);
  set(Imm.U32x2, 0x11, 0x13);
  set(Imm.BrTable, 0x0e);
  set(Imm.Func, 0x10, 0x12, 0xd2);
  set(Imm.SelectT, 0x1c);
  set(Imm.TryTable, 0x1f);
  set(Imm.I32, 0x41);
  set(Imm.I64, 0x42);
  set(Imm.Bytes4, 0x43);
  set(Imm.Bytes8, 0x44);
  set(Imm.Heap, 0xd0);
  set(Imm.Misc, 0xfc);
  set(Imm.Simd, 0xfd);
  set(Imm.Atomic, 0xfe);
  return t;
}

/** Decodes the instruction at `r.pos` into `out`, advancing past its immediates. */
export function decodeInstr(r: Reader, out: Instr): void {
  const at = r.pos;
  const op = r.u8();
  out.op = op;
  out.sub = -1;
  out.funcAt = -1;
  out.mem = -1;
  switch (IMMEDIATES[op] as Imm) {
    case Imm.None:
      return;
    case Imm.MemArg:
      return memarg(r, out);
    case Imm.Block:
      return blockType(r);
    case Imm.U32:
      return void r.u32();
    case Imm.U32x2:
      return void (r.u32(), r.u32());
    case Imm.BrTable:
      for (let n = r.u32(); n >= 0; n--) r.u32();
      return;
    case Imm.Func:
      out.funcAt = r.pos;
      out.func = r.u32();
      return;
    case Imm.SelectT:
      return void readVec(r, readValType);
    case Imm.TryTable:
      return tryTable(r);
    case Imm.I32:
      return r.skipSigned(32);
    case Imm.I64:
      return r.skipSigned(64);
    case Imm.Bytes4:
      return void r.take(4);
    case Imm.Bytes8:
      return void r.take(8);
    case Imm.Heap:
      return heapType(r);
    case Imm.Misc:
      return miscOp(r, out, at);
    case Imm.Simd:
      return simdOp(r, out, at);
    case Imm.Atomic:
      return atomicOp(r, out, at);
  }
  invalid(`unsupported opcode 0x${op.toString(16)}`, at);
}

function memarg(r: Reader, out: Instr): void {
  const align = r.u32();
  out.mem = align & 0x40 ? r.u32() : 0; // multi-memory: explicit memory index
  out.offset = r.u64();
}

/** Skips a block type: empty (0x40), a value type, or a type index (s33). */
export function blockType(r: Reader): void {
  const at = r.pos;
  const b = r.bytes[r.pos];
  if (b === 0x40) return void r.u8();
  if (b !== undefined && b >= 0x40 && b <= 0x7f) return void readValType(r);
  if (r.signed(33) < 0) invalid("bad block type", at);
}

function heapType(r: Reader): void {
  const at = r.pos;
  const b = r.bytes[r.pos];
  if (b === 0x70 || b === 0x6f) return void r.u8();
  if (r.signed(33) < 0) invalid("unsupported heap type", at);
}

function tryTable(r: Reader): void {
  blockType(r);
  for (let n = r.u32(); n > 0; n--) {
    const at = r.pos;
    const kind = r.u8();
    if (kind > 3) invalid(`bad catch clause ${kind}`, at);
    if (kind < 2) r.u32(); // tag index
    r.u32(); // label
  }
}

const MISC_U32_COUNT = [0, 0, 0, 0, 0, 0, 0, 0, 2, 1, 2, 1, 2, 1, 2, 1, 1, 1];

function miscOp(r: Reader, out: Instr, at: number): void {
  const sub = out.sub = r.u32();
  const count = MISC_U32_COUNT[sub];
  if (count === undefined) invalid(`unsupported opcode 0xfc ${sub}`, at);
  for (let i = 0; i < count; i++) {
    const imm = r.u32();
    // memory.init: (segment, memory); memory.copy: (dst, src); memory.fill: (memory)
    if ((sub === 8 && i === 1) || ((sub === 10 || sub === 11) && i === 0)) out.mem = imm;
  }
}

function simdOp(r: Reader, out: Instr, at: number): void {
  const sub = out.sub = r.u32();
  if (sub <= 11 || sub === 92 || sub === 93) return memarg(r, out);
  if (sub === 12 || sub === 13) return void r.take(16);
  if (sub >= 21 && sub <= 34) return void r.u8();
  if (sub >= 84 && sub <= 91) return void (memarg(r, out), r.u8());
  if (sub <= 0x113) return; // no immediates (includes relaxed SIMD)
  invalid(`unsupported opcode 0xfd ${sub}`, at);
}

function atomicOp(r: Reader, out: Instr, at: number): void {
  const sub = out.sub = r.u32();
  if (sub === 3) return void r.u8(); // atomic.fence
  if (sub <= 2 || (sub >= 0x10 && sub <= 0x4e)) return memarg(r, out);
  invalid(`unsupported opcode 0xfe ${sub}`, at);
}
