/**
 * Our own `wasi_snapshot_preview1` shim (not `node:wasi`, which is no
 * sandbox): stdin is the event, fd 1/2 are captured, args are `["hook"]`, the
 * environment holds only granted variables, clocks are coarse (1 ms), there
 * is no filesystem and no network.
 *
 * @module
 */
import type { GuestHost } from "../_host.ts";
import { ERRNO, guarded, type WasiFactory, type WasiFunction } from "./_wasi_errno.ts";
import { FD_FUNCTIONS, PATH_FUNCTIONS } from "./_wasi_fd.ts";
import { pollOneoff } from "./_wasi_poll.ts";

const ARGS = [new TextEncoder().encode("hook\0")];
/** Clock resolution reported to the guest and applied to every reading, in ns. */
const RESOLUTION_NS = 1_000_000n;
const ORIGIN = performance.now();
/** Most random bytes one `random_get` fills (bounds the host's work per call). */
export const MAX_RANDOM = 1 << 20;

/** Every preview1 function the shim provides (anything else is refused at load). */
const SHIM: Record<string, WasiFactory> = {
  args_sizes_get: (host) => (countPtr: number, sizePtr: number) =>
    sizes(host, ARGS, countPtr, sizePtr),
  args_get: (host) => (argv: number, buf: number) => strings(host, ARGS, argv, buf),
  environ_sizes_get: (host) => (countPtr: number, sizePtr: number) =>
    sizes(host, host.env, countPtr, sizePtr),
  environ_get: (host) => (environ: number, buf: number) => strings(host, host.env, environ, buf),
  clock_res_get: (host) => (id: number, out: number) => {
    if (id > 3) return ERRNO.INVAL;
    host.wrote(out, 8);
    host.view().setBigUint64(out, RESOLUTION_NS, true);
    return ERRNO.SUCCESS;
  },
  clock_time_get: (host) => (id: number, _precision: bigint, out: number) => {
    if (id > 3) return ERRNO.INVAL;
    host.wrote(out, 8);
    host.view().setBigUint64(out, coarseNow(id), true);
    return ERRNO.SUCCESS;
  },
  random_get: (host) => (ptr: number, len: number) => {
    if (len > MAX_RANDOM) return ERRNO.INVAL;
    const bytes = host.bytes();
    if (ptr + len > bytes.length) return ERRNO.FAULT;
    host.wrote(ptr, len);
    for (let at = 0; at < len; at += 65536) {
      const chunk = bytes.subarray(ptr + at, ptr + Math.min(len, at + 65536));
      crypto.getRandomValues(chunk as Uint8Array<ArrayBuffer>);
    }
    return ERRNO.SUCCESS;
  },
  proc_exit: (host) => (code: number) => host.halt({ kind: "exit", code: code >>> 0 }),
  sched_yield: () => () => ERRNO.SUCCESS,
  poll_oneoff: (host) => (inPtr: number, outPtr: number, n: number, countPtr: number) =>
    pollOneoff(host, inPtr, outPtr, n, countPtr),
  ...FD_FUNCTIONS,
  ...PATH_FUNCTIONS,
};

/**
 * The shim's functions for one instance's host, guarded: every one, or only
 * those named in `imported` (an instance gets what its module imports, not
 * the whole shim).
 */
export function wasiFunctions(
  host: GuestHost,
  imported?: Iterable<string>,
): Record<string, WasiFunction> {
  const shim: Record<string, WasiFunction> = {};
  for (const name of imported ?? Object.keys(SHIM)) {
    const make = Object.hasOwn(SHIM, name) ? SHIM[name] : undefined;
    if (make !== undefined) shim[name] = guarded(host, name, make(host));
  }
  return shim;
}

/** Names of the emulated functions, for the import policy. */
export const WASI_FUNCTION_NAMES: ReadonlySet<string> = new Set(Object.keys(SHIM));

/** Realtime (0) or monotonic (1; cputime ids 2/3 alias it), truncated to the resolution. */
function coarseNow(id: number): bigint {
  const ms = id === 0 ? Date.now() : performance.now() - ORIGIN;
  return BigInt(Math.floor(ms)) * RESOLUTION_NS;
}

function sizes(host: GuestHost, list: Uint8Array[], countPtr: number, sizePtr: number): number {
  const view = host.view();
  host.wrote(countPtr, 4);
  host.wrote(sizePtr, 4);
  view.setUint32(countPtr, list.length, true);
  view.setUint32(sizePtr, list.reduce((sum, s) => sum + s.length, 0), true);
  return ERRNO.SUCCESS;
}

function strings(host: GuestHost, list: Uint8Array[], ptrs: number, buf: number): number {
  const view = host.view();
  const bytes = host.bytes();
  let at = buf;
  list.forEach((entry, i) => {
    if (at + entry.length > bytes.length) throw new RangeError("out of bounds");
    host.wrote(ptrs + i * 4, 4);
    host.wrote(at, entry.length);
    view.setUint32(ptrs + i * 4, at, true);
    bytes.set(entry, at);
    at += entry.length;
  });
  return ERRNO.SUCCESS;
}
