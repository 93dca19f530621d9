/**
 * A wait with a deadline, for the service's steps that must not outlast an
 * agent's patience (`/v1/agents/…`): the store's key check, its hooks list,
 * the whole answer.
 *
 * @module
 */

/** What {@linkcode within} gives when the deadline comes first. */
export const LATE: unique symbol = Symbol("late");

/**
 * What `work` ends with, or {@linkcode LATE} once `ms` have passed without
 * it; `work` goes on (a rejection after that is handled: nothing is left
 * unhandled).
 */
export async function within<T>(work: Promise<T>, ms: number): Promise<T | typeof LATE> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<typeof LATE>((resolve) => {
    timer = setTimeout(() => resolve(LATE), Math.max(0, ms));
  });
  work.catch(() => {});
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
