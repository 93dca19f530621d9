/**
 * Per-tenant quotas (SPEC §6): concurrent dispatches (counted in this
 * process), events per minute and fuel per minute (counted in the store, so
 * every process sharing it counts together). Over a quota the API answers
 * `429 QUOTA_EXCEEDED` with `Retry-After`.
 *
 * @module
 */
import { ApiError } from "./errors.ts";
import type { Store, TenantPolicy } from "./store.ts";

const MINUTE = 60_000;

/** The quota keeper of one process. */
export class Quotas {
  #running = new Map<string, number>();

  constructor(private readonly store: Store, private readonly now: () => number) {}

  /**
   * Admits one dispatch or throws `429`. Counts the event unless `dryRun`.
   * Returns a release function to call when the dispatch ends.
   */
  async admit(tenantId: string, policy: TenantPolicy, dryRun: boolean): Promise<() => void> {
    const running = this.#running.get(tenantId) ?? 0;
    if (policy.max_concurrent !== undefined && running >= policy.max_concurrent) {
      throw exceeded(`${policy.max_concurrent} concurrent dispatches`, 1);
    }
    this.#running.set(tenantId, running + 1);
    const release = () => {
      const left = (this.#running.get(tenantId) ?? 1) - 1;
      if (left <= 0) this.#running.delete(tenantId);
      else this.#running.set(tenantId, left);
    };
    try {
      if (policy.events_per_minute !== undefined || policy.fuel_per_minute !== undefined) {
        const window = this.#window();
        const used = await this.store.addUsage(tenantId, window, dryRun ? 0 : 1, 0);
        const retry = Math.max(1, Math.ceil((window + MINUTE - this.now()) / 1000));
        if (policy.events_per_minute !== undefined && used.events > policy.events_per_minute) {
          throw exceeded(`${policy.events_per_minute} events per minute`, retry);
        }
        if (policy.fuel_per_minute !== undefined && used.fuel >= policy.fuel_per_minute) {
          throw exceeded(`${policy.fuel_per_minute} fuel per minute`, retry);
        }
      }
    } catch (err) {
      release();
      throw err;
    }
    return release;
  }

  /** Charges the fuel a dispatch used to the tenant's current minute. */
  async charge(tenantId: string, fuel: number): Promise<void> {
    if (fuel > 0) await this.store.addUsage(tenantId, this.#window(), 0, fuel);
  }

  #window(): number {
    const now = this.now();
    return now - (now % MINUTE);
  }
}

function exceeded(what: string, retryAfter: number): ApiError {
  return new ApiError(429, "QUOTA_EXCEEDED", `over the tenant's quota of ${what}`, { retryAfter });
}
