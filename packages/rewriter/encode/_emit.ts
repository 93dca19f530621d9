/**
 * Instruction sequences the rewriter inserts. Fuel lives in a per-function
 * i64 local while the function runs and is synchronised with the exported
 * global around calls, throws and exits, so hot loops touch no memory.
 *
 * @module
 */

import type { Emitter } from "./_emitter.ts";
import { OP } from "../decode/_op.ts";

/** Indices the inserted code refers to. */
export interface FuelSlots {
  global: number;
  outOfFuel: number;
  local: number;
}

/** Depth-counter indices and limit. */
export interface DepthSlots {
  global: number;
  max: number;
  exhausted: number;
}

/** How a length operand is turned into fuel: one unit per 16 bytes, or per element. */
export type LengthUnit = "bytes" | "elements";

/**
 * Emits `fuel -= cost; if (fuel < 0) out_of_fuel()` and returns the offset of
 * the padded `cost` immediate for later patching. At function entry the local
 * is loaded from the global first.
 */
export function emitCharge(e: Emitter, s: FuelSlots, atEntry: boolean): number {
  if (atEntry) e.globalGet(s.global);
  else e.localGet(s.local);
  const patchAt = e.i64ConstPatchable();
  e.op(OP.i64Sub).localTee(s.local);
  emitNegativeThenRefill(e, s);
  return patchAt;
}

/** With the fuel value on the stack: `if (value < 0) { publish; out_of_fuel(); reload }`. */
function emitNegativeThenRefill(e: Emitter, s: FuelSlots): void {
  e.i64Const(0).op(OP.i64LtS).ifVoid();
  emitFuelStore(e, s);
  e.call(s.outOfFuel);
  emitFuelLoad(e, s);
  e.end();
}

/** Emits `fuel -= cost` on the local (no check) and returns the patch offset. */
export function emitSub(e: Emitter, s: FuelSlots): number {
  e.localGet(s.local);
  const patchAt = e.i64ConstPatchable();
  e.op(OP.i64Sub).localSet(s.local);
  return patchAt;
}

/**
 * With a length operand on top of the stack, emits `fuel -= cost(length)`
 * followed by a check, and leaves the stack as it was: a bulk operation or a
 * grow is a checked point, charged before it runs, so no number of them in
 * straight-line code outruns the budget. The scratch locals follow the fuel
 * local: `local + 1` (i64) and `local + 2` (i32).
 */
export function emitLengthCharge(
  e: Emitter,
  s: FuelSlots,
  type: "i32" | "i64",
  unit: LengthUnit,
): void {
  const scratch = type === "i64" ? s.local + 1 : s.local + 2;
  e.localTee(scratch).localGet(s.local).localGet(scratch);
  if (type === "i32") e.op(OP.i64ExtendI32U);
  if (unit === "bytes") e.i64Const(4).op(OP.i64ShrU);
  e.op(OP.i64Sub).localTee(s.local);
  emitNegativeThenRefill(e, s);
}

/**
 * Emits `global -= cost; if (global < 0) out_of_fuel()` (through the i64
 * local `temp`, saving a second global read), for loop-free functions.
 * Returns the patch offset of `cost`.
 */
export function emitGlobalCharge(
  e: Emitter,
  s: { global: number; outOfFuel: number },
  temp: number,
): number {
  e.globalGet(s.global);
  const patchAt = e.i64ConstPatchable();
  e.op(OP.i64Sub).localTee(temp).globalSet(s.global);
  e.localGet(temp).i64Const(0).op(OP.i64LtS).ifVoid().call(s.outOfFuel).end();
  return patchAt;
}

/**
 * `local = min(local, global)`. Where a `try_table` catch clause can land,
 * the local may be stale (the throwing callee spent fuel from the global);
 * on every other path the local is never above the global, so taking the
 * smaller one is exact there and never refunds a callee's fuel.
 */
export function emitFuelMin(e: Emitter, s: FuelSlots): void {
  e.localGet(s.local).globalGet(s.global);
  e.localGet(s.local).globalGet(s.global).op(OP.i64LtS);
  e.select().localSet(s.local);
}

/** `global = local`: publish the function's fuel before calls and exits. */
export function emitFuelStore(e: Emitter, s: FuelSlots): void {
  e.localGet(s.local).globalSet(s.global);
}

/** `local = global`: pick up fuel after a call (the callee or host changed it). */
export function emitFuelLoad(e: Emitter, s: FuelSlots): void {
  e.globalGet(s.global).localSet(s.local);
}

/** `depth += 1; if (depth > max) stack_exhausted()`. */
export function emitDepthEnter(e: Emitter, d: DepthSlots): void {
  e.globalGet(d.global).i32Const(1).op(OP.i32Add).globalSet(d.global);
  e.globalGet(d.global).i32Const(d.max).op(OP.i32GtU);
  e.ifVoid().call(d.exhausted).end();
}

/** `depth -= 1`. */
export function emitDepthLeave(e: Emitter, d: DepthSlots): void {
  e.globalGet(d.global).i32Const(1).op(OP.i32Sub).globalSet(d.global);
}
