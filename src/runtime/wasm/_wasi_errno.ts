/**
 * WASI preview1 errno values the shim returns, and the wrapper that turns a
 * guest's out-of-bounds pointer into `EFAULT` instead of a host exception.
 *
 * @module
 */
import { isStackOverflow } from "./_halt.ts";
import type { GuestHost } from "./_host.ts";

/** WASI preview1 errno values (wasi/api.h). */
export const ERRNO = {
  SUCCESS: 0,
  BADF: 8,
  FAULT: 21,
  INVAL: 28,
  NOSYS: 52,
  NOTSUP: 58,
  SPIPE: 70,
  NOTCAPABLE: 76,
} as const;

/** A WASI import as the shim writes it: numbers and bigints in, errno out. */
// deno-lint-ignore no-explicit-any
export type WasiFunction = (...args: any[]) => number;

/**
 * Wraps a WASI function for the SDK, which binds the Extism call context as
 * the first argument (dropped here): checks the deadline first, and maps a
 * RangeError from a bad guest pointer to `EFAULT`. Halts and stack overflows
 * propagate.
 */
export function guarded(host: GuestHost, fn: WasiFunction): WasiFunction {
  return (_ctx, ...args) => {
    host.check();
    try {
      return fn(...args);
    } catch (err) {
      if (err instanceof RangeError && !isStackOverflow(err)) return ERRNO.FAULT;
      throw err;
    }
  };
}
