/**
 * Instruction sequences the rewriter inserts. Fuel lives in a per-function
 * i64 local while the function runs and is synchronised with the exported
 * global around calls, throws and exits, so hot loops touch no memory.
 *
 * @module
 */

import type { Writer } from "./_writer.ts";

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

const GLOBAL_GET = 0x23;
const GLOBAL_SET = 0x24;
const LOCAL_GET = 0x20;
const LOCAL_SET = 0x21;
const LOCAL_TEE = 0x22;

/**
 * Emits `fuel -= cost; if (fuel < 0) out_of_fuel()` and returns the offset of
 * the padded `cost` immediate for later patching. At function entry the local
 * is loaded from the global first.
 */
export function emitCharge(w: Writer, s: FuelSlots, atEntry: boolean): number {
  if (atEntry) w.u8(GLOBAL_GET).u32(s.global);
  else w.u8(LOCAL_GET).u32(s.local);
  w.u8(0x42);
  const patchAt = w.signed5(0);
  w.u8(0x7d).u8(LOCAL_TEE).u32(s.local).u8(0x42).u8(0x00).u8(0x53); // i64.sub, tee, < 0
  w.u8(0x04).u8(0x40);
  emitFuelStore(w, s);
  w.u8(0x10).u32(s.outOfFuel);
  emitFuelLoad(w, s);
  w.u8(0x0b);
  return patchAt;
}

/** Emits `fuel -= cost` on the local (no check) and returns the patch offset. */
export function emitSub(w: Writer, s: FuelSlots): number {
  w.u8(LOCAL_GET).u32(s.local).u8(0x42);
  const patchAt = w.signed5(0);
  w.u8(0x7d).u8(LOCAL_SET).u32(s.local);
  return patchAt;
}

/**
 * With the length operand on top of the stack, emits `fuel -= length >> 4`
 * and leaves the stack as it was. The scratch locals follow the fuel local:
 * `local + 1` (i64) and `local + 2` (i32).
 */
export function emitLengthCharge(w: Writer, s: FuelSlots, type: "i32" | "i64"): void {
  const scratch = type === "i64" ? s.local + 1 : s.local + 2;
  w.u8(LOCAL_TEE).u32(scratch).u8(LOCAL_GET).u32(s.local).u8(LOCAL_GET).u32(scratch);
  if (type === "i32") w.u8(0xad); // i64.extend_i32_u
  w.u8(0x42).u8(4).u8(0x88); // i64.const 4, i64.shr_u
  w.u8(0x7d).u8(LOCAL_SET).u32(s.local); // i64.sub
}

/**
 * Emits `global -= cost` and, when `check`, `if (global < 0) out_of_fuel()`
 * (through the i64 local `temp`, saving a second global read), for loop-free
 * functions. Returns the patch offset of `cost`.
 */
export function emitGlobalCharge(
  w: Writer,
  s: { global: number; outOfFuel: number },
  check: boolean,
  temp: number,
): number {
  w.u8(GLOBAL_GET).u32(s.global).u8(0x42);
  const patchAt = w.signed5(0);
  w.u8(0x7d);
  if (!check) {
    w.u8(GLOBAL_SET).u32(s.global);
    return patchAt;
  }
  w.u8(LOCAL_TEE).u32(temp).u8(GLOBAL_SET).u32(s.global);
  w.u8(LOCAL_GET).u32(temp).u8(0x42).u8(0x00).u8(0x53); // < 0
  w.u8(0x04).u8(0x40).u8(0x10).u32(s.outOfFuel).u8(0x0b);
  return patchAt;
}

/** `global = local`: publish the function's fuel before calls and exits. */
export function emitFuelStore(w: Writer, s: FuelSlots): void {
  w.u8(LOCAL_GET).u32(s.local).u8(GLOBAL_SET).u32(s.global);
}

/** `local = global`: pick up fuel after a call (the callee or host changed it). */
export function emitFuelLoad(w: Writer, s: FuelSlots): void {
  w.u8(GLOBAL_GET).u32(s.global).u8(LOCAL_SET).u32(s.local);
}

/** `depth += 1; if (depth > max) stack_exhausted()`. */
export function emitDepthEnter(w: Writer, d: DepthSlots): void {
  w.u8(GLOBAL_GET).u32(d.global).u8(0x41).u8(0x01).u8(0x6a).u8(GLOBAL_SET).u32(d.global);
  w.u8(GLOBAL_GET).u32(d.global).u8(0x41).signed(d.max).u8(0x4b); // i32.gt_u
  w.u8(0x04).u8(0x40).u8(0x10).u32(d.exhausted).u8(0x0b);
}

/** `depth -= 1`. */
export function emitDepthLeave(w: Writer, d: DepthSlots): void {
  w.u8(GLOBAL_GET).u32(d.global).u8(0x41).u8(0x01).u8(0x6b).u8(GLOBAL_SET).u32(d.global);
}
