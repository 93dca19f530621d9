/**
 * Instruction decoder: reads one instruction, skipping its immediates exactly,
 * and reports what the rewriter cares about (function-index immediates and
 * block structure). Unknown opcodes throw `PLUGIN_INVALID` naming the opcode.
 *
 * @module
 */

import { invalid, type Reader } from "./_reader.ts";
import { readValType, readVec } from "./_module.ts";
import { OP } from "./_op.ts";

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
export const OPENERS: ReadonlySet<number> = new Set([
  OP.block,
  OP.loop,
  OP.if,
  OP.try,
  OP.tryTable,
]);
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

/** Each opcode's immediates, by name (`OP`, the emitter's list): what is not here is invalid. */
function buildTable(): Uint8Array {
  const t = new Uint8Array(256); // Imm.Invalid
  const set = (kind: Imm, ...ops: number[]) => ops.forEach((op) => t[op] = kind);
  const range = (kind: Imm, first: number, last: number) => {
    for (let op = first; op <= last; op++) t[op] = kind;
  };
  range(Imm.None, OP.i32Eqz, OP.i64Extend32S);
  range(Imm.MemArg, OP.i32Load, OP.i64Store32);
  set(Imm.None, OP.unreachable, OP.nop, OP.else, OP.throwRef, OP.end, OP.return, OP.catchAll);
  set(Imm.None, OP.drop, OP.select, OP.refIsNull, OP.refEq, OP.refAsNonNull);
  set(Imm.Block, OP.block, OP.loop, OP.if, OP.try);
  set(Imm.U32, OP.catch, OP.throw, OP.rethrow, OP.br, OP.brIf, OP.callRef, OP.returnCallRef);
  set(Imm.U32, OP.delegate, OP.memorySize, OP.memoryGrow, OP.brOnNull, OP.brOnNonNull);
  set(Imm.U32, OP.localGet, OP.localSet, OP.localTee, OP.globalGet, OP.globalSet);
  set(Imm.U32, OP.tableGet, OP.tableSet);
  set(Imm.U32x2, OP.callIndirect, OP.returnCallIndirect);
  set(Imm.BrTable, OP.brTable);
  set(Imm.Func, OP.call, OP.returnCall, OP.refFunc);
  set(Imm.SelectT, OP.selectTyped);
  set(Imm.TryTable, OP.tryTable);
  set(Imm.I32, OP.i32Const);
  set(Imm.I64, OP.i64Const);
  set(Imm.Bytes4, OP.f32Const);
  set(Imm.Bytes8, OP.f64Const);
  set(Imm.Heap, OP.refNull);
  set(Imm.Misc, OP.misc);
  set(Imm.Simd, OP.simd);
  set(Imm.Atomic, OP.atomic);
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
