/**
 * The PostgreSQL store (`postgres.ts`): concurrency leases and per-minute usage.
 *
 * @module
 */
import type { Store } from "../store/store.ts";
import type { PgContext } from "./_postgres_context.ts";

/** The store's methods for concurrency leases and per-minute usage. */
export function quotaMethods(c: PgContext): Pick<
  Store,
  | "acquireLease"
  | "releaseLease"
  | "renewLeases"
  | "addUsage"
  | "pruneUsage"
> {
  const { sql } = c;
  return {
    acquireLease(tenantId, leaseId, max, now, expiresAt) {
      return sql.begin(async (tx) => {
        // One tenant's admissions are serialised, across every process.
        await tx`SELECT pg_advisory_xact_lock(hashtext(${`lease/${tenantId}`}))`;
        await tx`DELETE FROM leases WHERE tenant_id = ${tenantId} AND expires_at < ${now}`;
        const [r] = await tx`SELECT COUNT(*) AS n FROM leases WHERE tenant_id = ${tenantId}`;
        if (Number(r!.n) >= max) return false;
        await tx`INSERT INTO leases (tenant_id, lease_id, expires_at)
          VALUES (${tenantId}, ${leaseId}, ${expiresAt})`;
        return true;
      });
    },
    async releaseLease(tenantId, leaseId) {
      await sql`DELETE FROM leases WHERE tenant_id = ${tenantId} AND lease_id = ${leaseId}`;
    },
    async renewLeases(leaseIds, expiresAt) {
      if (leaseIds.length === 0) return;
      await sql`UPDATE leases SET expires_at = ${expiresAt} WHERE lease_id = ANY(${leaseIds as string[]})`;
    },
    async addUsage(tenantId, windowStart, events, fuel) {
      const [r] = await sql`INSERT INTO usage (tenant_id, window_start, events, fuel)
        VALUES (${tenantId}, ${windowStart}, ${events}, ${fuel})
        ON CONFLICT (tenant_id, window_start) DO UPDATE
          SET events = usage.events + EXCLUDED.events, fuel = usage.fuel + EXCLUDED.fuel
        RETURNING events, fuel`;
      return { events: Number(r!.events), fuel: Number(r!.fuel) };
    },
    async pruneUsage(before) {
      return (await sql`DELETE FROM usage WHERE window_start < ${before}`).count;
    },
  };
}
