/**
 * The stop gate's budget for agents' HTTP hooks (SPEC §8): how many times a
 * session's stop has been bounced, per tenant, agent and session, in this
 * process. A stop that is not a retry (`stop_hook_active` false) starts at
 * 0; each retry counts one more.
 *
 * Bounded: past {@linkcode MAX_SESSIONS} in all, a least recently seen
 * session is forgotten (it counts from 0 again), taken from the tenant that
 * remembers the most, or from the tenant adding one if it holds at least its
 * even share. A forgotten count never reaches the gate's limit, so the
 * agent is sent back to work for ever: one tenant's stream of new sessions
 * must not push out another's.
 *
 * @module
 */

/** Sessions remembered at most, over all tenants. */
export const MAX_SESSIONS = 10_000;

/** Per-session stop counts. */
export class StopCounts {
  /** Each tenant's counts by agent and session, least recently seen first. */
  readonly #tenants = new Map<string, Map<string, number>>();
  #size = 0;

  /** Sessions remembered now. */
  get size(): number {
    return this.#size;
  }

  /** This stop's `stop_count` for the session (see the module doc). */
  next(tenant: string, agent: string, session: string, retry: boolean): number {
    let own = this.#tenants.get(tenant);
    if (own === undefined) this.#tenants.set(tenant, own = new Map());
    const key = `${agent}\0${session}`;
    const before = own.get(key);
    const count = retry ? (before ?? 0) + 1 : 0;
    if (before === undefined) this.#size++;
    else own.delete(key);
    own.set(key, count);
    if (this.#size > MAX_SESSIONS) this.#forgetOne(tenant, own);
    return count;
  }

  /** Forgets the least recently seen session of `tenant`'s, or of the tenant with the most. */
  #forgetOne(tenant: string, own: Map<string, number>): void {
    let from = tenant;
    let counts = own;
    if (own.size < MAX_SESSIONS / this.#tenants.size) {
      for (const [id, theirs] of this.#tenants) {
        if (theirs.size > counts.size) [from, counts] = [id, theirs];
      }
    }
    counts.delete(counts.keys().next().value!);
    this.#size--;
    if (counts.size === 0) this.#tenants.delete(from);
  }
}
