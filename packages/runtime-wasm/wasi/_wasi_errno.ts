/**
 * WASI preview1 errno values the shim returns, and the wrapper that turns a
 * guest's out-of-bounds pointer into `EFAULT` instead of a host exception.
 *
 * @module
 */
import { isStackOverflow } from "../instance/_halt.ts";
import type { GuestHost } from "../_host.ts";
import { fault } from "../extism/_shield.ts";

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

/** Makes one WASI function for an instance's host (see `wasiFunctions`). */
export type WasiFactory = (host: GuestHost) => WasiFunction;

/**
 * Wraps a WASI function for the SDK, which binds the Extism call context as
 * the first argument (dropped here): checks the deadline first, reads every
 * i32 argument as the unsigned number preview1 means (pointers, lengths and
 * fds are all u32, so a "negative" pointer is a huge one, never an index from
 * the end), and maps a RangeError from a bad guest pointer to `EFAULT`. Halts
 * and stack overflows propagate; any other exception becomes an uncatchable
 * halt (see `_shield.ts`).
 */
export function guarded(host: GuestHost, name: string, fn: WasiFunction): WasiFunction {
  return (_ctx, ...args) => {
    host.check();
    for (let i = 0; i < args.length; i++) {
      if (typeof args[i] === "number") args[i] = args[i] >>> 0;
    }
    try {
      return fn(...args);
    } catch (err) {
      if (err instanceof RangeError && !isStackOverflow(err)) return ERRNO.FAULT;
      throw fault(host, name, err);
    }
  };
}
