/**
 * `poll_oneoff` without blocking: a call cannot sleep on a thread-less host,
 * so clock subscriptions fire at once (a `sleep()` returns early), stdin is
 * readable, stdout/stderr are writable, anything else reports `EBADF`. A guest
 * that sleeps in a loop is stopped by the deadline check of every host call.
 *
 * @module
 */
import type { GuestHost } from "../_host.ts";
import { ERRNO } from "./_wasi_errno.ts";

/** Most subscriptions one call may poll (bounds the host's work per call). */
export const MAX_SUBSCRIPTIONS = 1024;
const SUBSCRIPTION_SIZE = 48;
const EVENT_SIZE = 32;
const CLOCK = 0;
const FD_READ = 1;
const FD_WRITE = 2;

/** `poll_oneoff(in, out, nsubscriptions, nevents_out)`. */
export function pollOneoff(
  host: GuestHost,
  inPtr: number,
  outPtr: number,
  n: number,
  countPtr: number,
): number {
  if (n === 0 || n > MAX_SUBSCRIPTIONS) return ERRNO.INVAL;
  const view = host.view();
  for (let i = 0; i < n; i++) {
    const sub = inPtr + i * SUBSCRIPTION_SIZE;
    const event = outPtr + i * EVENT_SIZE;
    host.wrote(event, EVENT_SIZE);
    const tag = view.getUint8(sub + 8);
    const fd = view.getUint32(sub + 16, true);
    view.setBigUint64(event, view.getBigUint64(sub, true), true);
    view.setUint16(event + 8, eventError(tag, fd), true);
    view.setUint8(event + 10, tag);
    const ready = tag === FD_READ ? host.input.length - host.inputPos : 0;
    view.setBigUint64(event + 16, BigInt(ready), true);
    view.setUint16(event + 24, 0, true);
  }
  host.wrote(countPtr, 4);
  view.setUint32(countPtr, n, true);
  return ERRNO.SUCCESS;
}

function eventError(tag: number, fd: number): number {
  if (tag === CLOCK) return ERRNO.SUCCESS;
  if (tag === FD_READ) return fd === 0 ? ERRNO.SUCCESS : ERRNO.BADF;
  if (tag === FD_WRITE) return fd === 1 || fd === 2 ? ERRNO.SUCCESS : ERRNO.BADF;
  return ERRNO.INVAL;
}
