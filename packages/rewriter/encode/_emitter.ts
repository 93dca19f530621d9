/**
 * An instruction emitter with one named method per instruction the rewriter
 * inserts, so inserted code reads as WebAssembly rather than as bytes.
 *
 * @module
 */

import { MEMARG_MEMORY_INDEX, MISC, OP, TYPE } from "../decode/_op.ts";
import { Writer } from "./_writer.ts";

/** A {@linkcode Writer} that also writes instructions by name. */
export class Emitter extends Writer {
  /** `local.get index` */
  localGet(index: number): this {
    return this.u8(OP.localGet).u32(index);
  }
  /** `local.set index` */
  localSet(index: number): this {
    return this.u8(OP.localSet).u32(index);
  }
  /** `local.tee index` */
  localTee(index: number): this {
    return this.u8(OP.localTee).u32(index);
  }
  /** `global.get index` */
  globalGet(index: number): this {
    return this.u8(OP.globalGet).u32(index);
  }
  /** `global.set index` */
  globalSet(index: number): this {
    return this.u8(OP.globalSet).u32(index);
  }
  /** `i32.const value` */
  i32Const(value: number): this {
    return this.u8(OP.i32Const).signed(value | 0);
  }
  /** `i64.const value` */
  i64Const(value: number): this {
    return this.u8(OP.i64Const).signed(value);
  }
  /** `i64.const` with a 5-byte immediate; returns its offset for `patchSigned5`. */
  i64ConstPatchable(): number {
    this.u8(OP.i64Const);
    return this.signed5(0);
  }
  /** `call func` */
  call(func: number): this {
    return this.u8(OP.call).u32(func);
  }
  /** `if` with no results. */
  ifVoid(): this {
    return this.u8(OP.if).u8(TYPE.void);
  }
  /** `block` with the given encoded block type. */
  block(blockType: readonly number[]): this {
    this.u8(OP.block);
    for (const b of blockType) this.u8(b);
    return this;
  }
  /** `br depth` */
  br(depth: number): this {
    return this.u8(OP.br).u32(depth);
  }
  /** `end` */
  end(): this {
    return this.u8(OP.end);
  }
  /** `select` (untyped). */
  select(): this {
    return this.u8(OP.select);
  }
  /** A plain single-byte instruction named in `OP`. */
  op(code: typeof OP[keyof typeof OP]): this {
    return this.u8(code);
  }
  /** `memory.grow memory` */
  memoryGrow(memory: number): this {
    return this.u8(OP.memoryGrow).u32(memory);
  }
  /** `i32.store8 memory offset=0 align=0` (multi-memory form). */
  i32Store8(memory: number): this {
    return this.u8(OP.i32Store8).u8(MEMARG_MEMORY_INDEX).u32(memory).u8(0);
  }
  /** `memory.fill memory` */
  memoryFill(memory: number): this {
    return this.u8(OP.misc).u32(MISC.memoryFill).u32(memory);
  }
}
