/**
 * Per-tenant quotas (SPEC §6): concurrent dispatches (leases in the store),
 * events per minute and fuel per minute (usage rows in the store) — every
 * process sharing the store counts together. Over a quota the API answers
 * `429 QUOTA_EXCEEDED` with `Retry-After`.
 *
 * @module
 */
import { ApiError } from "./errors.ts";
import type { Store, TenantPolicy } from "../store/store.ts";

const MINUTE = 60_000;

/**
 * How long a lease lives past its last renewal: a process that dies with
 * leases held (`kill -9`) frees them within this (SPEC §6 quotas across
 * instances), however long the dispatches it held them for could have run.
 */
export const LEASE_MS = 10_000;
/** How often a process renews the leases it holds. */
export const LEASE_RENEW_MS = 3_000;

/** A per-minute quota a tenant went over, until its minute ends. */
interface Over {
  until: number;
  /** The limits it went over (a changed policy forgets it). */
  limits: string;
  what: string;
}

/** The quota keeper of one process. */
export class Quotas {
  #nextLease = 0;
  readonly #prefix = crypto.randomUUID();
  readonly #over = new Map<string, Over>();
  readonly #held = new Set<string>();
  #heartbeat: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly store: Store, private readonly now: () => number) {}

  /**
   * Admits one dispatch or throws `429`: {@linkcode lease}, then
   * {@linkcode count}. Returns a release function to call when the dispatch
   * ends.
   */
  async admit(
    tenantId: string,
    policy: TenantPolicy,
    dryRun: boolean,
  ): Promise<() => Promise<void>> {
    const release = await this.lease(tenantId, policy);
    try {
      await this.count(tenantId, policy, dryRun);
    } catch (err) {
      await release();
      throw err;
    }
    return release;
  }

  /**
   * Takes one of the tenant's `max_concurrent` leases or throws `429`;
   * returns its release (nothing to release without the quota). The service
   * takes it before it reads the request's body, so that a tenant at its
   * limit is refused before its body costs the thread that answers every
   * tenant a parse.
   */
  async lease(tenantId: string, policy: TenantPolicy): Promise<() => Promise<void>> {
    if (policy.max_concurrent === undefined) return () => Promise.resolve();
    const lease = `${this.#prefix}-${this.#nextLease++}`;
    const now = this.now();
    const taken = await this.store.acquireLease(
      tenantId,
      lease,
      policy.max_concurrent,
      now,
      now + LEASE_MS,
    );
    if (!taken) throw exceeded(`${policy.max_concurrent} concurrent dispatches`, 1);
    this.#held.add(lease);
    this.#heartbeat ??= setInterval(() => void this.renew(), LEASE_RENEW_MS);
    return () => {
      this.#held.delete(lease);
      if (this.#held.size === 0 && this.#heartbeat !== null) {
        clearInterval(this.#heartbeat);
        this.#heartbeat = null;
      }
      return this.store.releaseLease(tenantId, lease).catch(() => {});
    };
  }

  /** Leases this process holds now (renewed every {@linkcode LEASE_RENEW_MS}). */
  get held(): number {
    return this.#held.size;
  }

  /** Renews the leases held (the heartbeat calls it; a failure is retried at the next beat). */
  renew(): Promise<void> {
    return this.store.renewLeases([...this.#held], this.now() + LEASE_MS).catch(() => {});
  }

  /** Stops the heartbeat: the leases still held lapse {@linkcode LEASE_MS} after their last renewal. */
  stop(): void {
    if (this.#heartbeat !== null) clearInterval(this.#heartbeat);
    this.#heartbeat = null;
  }

  /** Counts one event (none for a dry run) against the per-minute quotas, or throws `429`. */
  async count(tenantId: string, policy: TenantPolicy, dryRun: boolean): Promise<void> {
    if (policy.events_per_minute === undefined && policy.fuel_per_minute === undefined) return;
    const window = this.#window();
    const used = await this.store.addUsage(tenantId, window, dryRun ? 0 : 1, 0);
    const retry = Math.max(1, Math.ceil((window + MINUTE - this.now()) / 1000));
    const over = (what: string) => {
      this.#remember(tenantId, { until: window + MINUTE, limits: limitsOf(policy), what });
      return exceeded(what, retry);
    };
    if (policy.events_per_minute !== undefined && used.events > policy.events_per_minute) {
      throw over(`${policy.events_per_minute} events per minute`);
    }
    if (policy.fuel_per_minute !== undefined && used.fuel >= policy.fuel_per_minute) {
      throw over(`${policy.fuel_per_minute} fuel per minute`);
    }
  }

  /**
   * Throws the `429` a tenant already got from this process for a per-minute
   * quota, until that minute ends — before its request's body is read:
   * usage only grows within a minute, so {@linkcode admit} would refuse it
   * again, but only after the body was read and parsed (a megabyte of small
   * keys, 10–15 ms of the thread that answers every tenant, per refusal).
   */
  refuseEarly(tenantId: string, policy: TenantPolicy): void {
    const over = this.#over.get(tenantId);
    if (over === undefined) return;
    const now = this.now();
    if (now >= over.until || over.limits !== limitsOf(policy)) {
      this.#over.delete(tenantId);
      return;
    }
    throw exceeded(over.what, Math.max(1, Math.ceil((over.until - now) / 1000)));
  }

  /**
   * Reserves, before a dispatch, the fuel it may burn under the tenant's
   * `fuel_per_minute`: `ceiling` (the most its hooks can burn), less where the
   * minute has less left. The reservation is added to the store's count at
   * once, so dispatches running together on any number of instances never
   * reserve more than the quota; `settle(used)` then charges what was used
   * instead of what was reserved. Null without the quota; `429` when nothing
   * is left.
   */
  async reserveFuel(
    tenantId: string,
    policy: TenantPolicy,
    ceiling: number,
  ): Promise<{ granted: number; settle(used: number): Promise<void> } | null> {
    const quota = policy.fuel_per_minute;
    if (quota === undefined) return null;
    const window = this.#window();
    const asked = Math.max(1, Math.min(ceiling, quota));
    const after = await this.store.addUsage(tenantId, window, 0, asked);
    const before = after.fuel - asked;
    const granted = Math.min(asked, quota - before);
    if (granted <= 0) {
      await this.store.addUsage(tenantId, window, 0, -asked).catch(() => {});
      const retry = Math.max(1, Math.ceil((window + MINUTE - this.now()) / 1000));
      this.#remember(tenantId, {
        until: window + MINUTE,
        limits: limitsOf(policy),
        what: `${quota} fuel per minute`,
      });
      throw exceeded(`${quota} fuel per minute`, retry);
    }
    let settled = false;
    return {
      granted,
      settle: async (used: number) => {
        if (settled) return;
        settled = true;
        const back = asked - Math.min(used, granted);
        if (back !== 0) await this.store.addUsage(tenantId, window, 0, -back);
      },
    };
  }

  /** Remembers a refusal; past a thousand tenants, forgets those whose minute has ended. */
  #remember(tenantId: string, over: Over): void {
    if (this.#over.size >= 1_000) {
      const now = this.now();
      for (const [id, o] of this.#over) if (now >= o.until) this.#over.delete(id);
    }
    this.#over.set(tenantId, over);
  }

  #window(): number {
    const now = this.now();
    return now - (now % MINUTE);
  }
}

const limitsOf = (policy: TenantPolicy) => `${policy.events_per_minute}/${policy.fuel_per_minute}`;

function exceeded(what: string, retryAfter: number): ApiError {
  return new ApiError(429, "QUOTA_EXCEEDED", `over the tenant's quota of ${what}`, { retryAfter });
}
