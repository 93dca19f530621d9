/**
 * The embedded store (`sqlite.ts`): quotas kept in the store: concurrent-dispatch leases and per-minute usage.
 *
 * @module
 */
import type { Store } from "../store/store.ts";
import type { Row } from "../store/rows.ts";
import { nextTurn, PRUNE_WINDOW, type SqliteContext } from "./_sqlite_context.ts";

/** The store's methods for quotas kept in the store: concurrent-dispatch leases and per-minute usage. */
export function quotaMethods(
  c: SqliteContext,
): Pick<Store, "acquireLease" | "releaseLease" | "renewLeases" | "addUsage" | "pruneUsage"> {
  const { q, tx } = c;
  return {
    acquireLease(tenantId, leaseId, max, now, expiresAt) {
      return Promise.resolve(tx(() => {
        q("DELETE FROM leases WHERE tenant_id = ? AND expires_at < ?").run(tenantId, now);
        const r = q("SELECT COUNT(*) AS n FROM leases WHERE tenant_id = ?").get(tenantId) as Row;
        if (Number(r.n) >= max) return false;
        q("INSERT INTO leases (tenant_id, lease_id, expires_at) VALUES (?, ?, ?)")
          .run(tenantId, leaseId, expiresAt);
        return true;
      }));
    },
    releaseLease(tenantId, leaseId) {
      q("DELETE FROM leases WHERE tenant_id = ? AND lease_id = ?").run(tenantId, leaseId);
      return Promise.resolve();
    },
    renewLeases(leaseIds, expiresAt) {
      if (leaseIds.length === 0) return Promise.resolve();
      tx(() => {
        const renew = q("UPDATE leases SET expires_at = ? WHERE lease_id = ?");
        for (const id of leaseIds) renew.run(expiresAt, id);
      });
      return Promise.resolve();
    },

    addUsage(tenantId, windowStart, events, fuel) {
      const r = q(`INSERT INTO usage (tenant_id, window_start, events, fuel) VALUES (?, ?, ?, ?)
        ON CONFLICT (tenant_id, window_start) DO UPDATE SET events = events + excluded.events,
        fuel = fuel + excluded.fuel RETURNING events, fuel`).get(
        tenantId,
        windowStart,
        events,
        fuel,
      ) as Row;
      return Promise.resolve({ events: Number(r.events), fuel: Number(r.fuel) });
    },
    async pruneUsage(before) {
      // A thousand at a time, a turn of the loop in between (as pruneAudit).
      let removed = 0;
      for (;;) {
        const r = q(`DELETE FROM usage WHERE rowid IN
          (SELECT rowid FROM usage WHERE window_start < ? LIMIT ${PRUNE_WINDOW})`).run(before);
        removed += Number(r.changes);
        if (Number(r.changes) < PRUNE_WINDOW) return removed;
        await nextTurn();
      }
    },
  };
}
