/**
 * A {@linkcode Timer} on `AbortSignal.timeout`, which Deno runs without
 * loading its Node timers (the global `setTimeout` costs a Deno 2 process
 * 4–8 ms the first time). Its timers cannot be cleared: cancelling only stops
 * `fn` from being called, and the process stays alive until they fire. For a
 * process that exits once it has answered (the one-shot `hookbox dispatch`).
 *
 * @module
 */
import type { Timer } from "../core/timer.ts";

/** `AbortSignal.timeout` as a {@linkcode Timer} (see the module's note). */
export const signalTimer: Timer = (ms, fn) => {
  let live = true;
  AbortSignal.timeout(Math.max(0, Math.ceil(ms))).addEventListener("abort", () => {
    if (live) fn();
  }, { once: true });
  return () => {
    live = false;
  };
};
