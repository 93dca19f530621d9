/**
 * The one-shot timer the dispatcher waits with (a hook's build against the
 * event's deadline): the global `setTimeout` unless the host installs another
 * with {@linkcode useTimer}. Deno 2's global `setTimeout` loads its Node
 * timers the first time it is used (4–8 ms), which a hook command spawned
 * once per event pays on every call.
 *
 * @module
 */

/** Calls `fn` once after `ms` ms; the function it returns cancels that. */
export type Timer = (ms: number, fn: () => void) => () => void;

const globalTimer: Timer = (ms, fn) => {
  const id = setTimeout(fn, ms);
  return () => clearTimeout(id);
};

let timer: Timer = globalTimer;

/** Makes the dispatcher wait with `impl` (null: the global `setTimeout` again). */
export function useTimer(impl: Timer | null): void {
  timer = impl ?? globalTimer;
}

/** Calls `fn` after `ms` ms with the installed timer; returns its cancel function. */
export function after(ms: number, fn: () => void): () => void {
  return timer(ms, fn);
}
