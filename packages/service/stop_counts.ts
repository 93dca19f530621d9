/**
 * The stop gate's budget for agents' HTTP hooks (SPEC §8): how many times a
 * session's stop has been bounced, per tenant, agent and session, in this
 * process. A stop that is not a retry (`stop_hook_active` false) starts at
 * 0; each retry counts one more. Bounded: past {@linkcode MAX_SESSIONS} the
 * least recently seen session is forgotten (it counts from 0 again).
 *
 * @module
 */

/** Sessions remembered at most. */
export const MAX_SESSIONS = 10_000;

/** Per-session stop counts. */
export class StopCounts {
  #counts = new Map<string, number>();

  /** This stop's `stop_count` for the session (see the module doc). */
  next(tenant: string, agent: string, session: string, retry: boolean): number {
    const key = `${tenant}\0${agent}\0${session}`;
    const count = retry ? (this.#counts.get(key) ?? 0) + 1 : 0;
    this.#counts.delete(key);
    this.#counts.set(key, count);
    if (this.#counts.size > MAX_SESSIONS) this.#counts.delete(this.#counts.keys().next().value!);
    return count;
  }
}
