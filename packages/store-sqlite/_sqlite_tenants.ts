/**
 * The embedded store (`sqlite.ts`): tenants and their API keys.
 *
 * @module
 */
import type { KeyInfo, KeyRow, Store } from "../store/store.ts";

import type { Row } from "../store/rows.ts";
import { nextTurn, PRUNE_WINDOW, type SqliteContext } from "./_sqlite_context.ts";

/** The store's methods for tenants and their API keys. */
export function tenantMethods(
  c: SqliteContext,
): Pick<
  Store,
  | "createTenant"
  | "getTenant"
  | "listTenants"
  | "deleteTenant"
  | "setPolicy"
  | "createKey"
  | "revokeKey"
  | "findKey"
  | "liveKeyHashes"
  | "listKeys"
  | "tenantForKey"
> {
  const { q, tx, bump, tenantRow } = c;
  return {
    createTenant(row) {
      const r = q(
        "INSERT INTO tenants (id, policy, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
      )
        .run(row.id, JSON.stringify(row.policy), row.created_at);
      return Promise.resolve(Number(r.changes) === 1);
    },
    getTenant(id) {
      const r = q("SELECT * FROM tenants WHERE id = ?").get(id);
      return Promise.resolve(r ? tenantRow(r as Row) : null);
    },
    listTenants() {
      return Promise.resolve(
        q("SELECT * FROM tenants ORDER BY id").all().map((r) => tenantRow(r as Row)),
      );
    },
    async deleteTenant(id) {
      if (q("SELECT 1 AS one FROM tenants WHERE id = ?").get(id) === undefined) return false;
      // Its audit can be millions of rows: those there now go first, a thousand
      // at a time with a turn of the loop in between (one DELETE held the
      // request thread ~1 s per million rows); what its dispatches add
      // meanwhile goes with the tenant in one transaction.
      const top = Number(
        (q("SELECT MAX(seq) AS top FROM audit WHERE tenant_id = ?").get(id) as Row).top ?? 0,
      );
      for (;;) {
        const r = q(`DELETE FROM audit WHERE seq IN (SELECT seq FROM audit
          WHERE tenant_id = ? AND seq <= ? ORDER BY seq LIMIT ${PRUNE_WINDOW})`).run(id, top);
        if (Number(r.changes) < PRUNE_WINDOW) break;
        await nextTurn();
      }
      return tx(() => {
        const r = q("DELETE FROM tenants WHERE id = ?").run(id);
        if (Number(r.changes) === 0) return false;
        q("DELETE FROM hooks WHERE tenant_id = ?").run(id);
        q("DELETE FROM hook_versions WHERE tenant_id = ?").run(id);
        q("DELETE FROM audit WHERE tenant_id = ?").run(id);
        q("DELETE FROM usage WHERE tenant_id = ?").run(id);
        q("DELETE FROM leases WHERE tenant_id = ?").run(id);
        q("DELETE FROM captures WHERE tenant_id = ?").run(id);
        q("DELETE FROM shadows WHERE tenant_id = ?").run(id);
        q("DELETE FROM shadow_runs WHERE tenant_id = ?").run(id);
        bump();
        return true;
      });
    },
    setPolicy(id, policy) {
      const r = q("UPDATE tenants SET policy = ? WHERE id = ?").run(JSON.stringify(policy), id);
      return Promise.resolve(Number(r.changes) === 1);
    },

    createKey(row) {
      q("INSERT INTO api_keys (id, tenant_id, name, hash, created_at) VALUES (?, ?, ?, ?, ?)")
        .run(row.id, row.tenant_id, row.name, row.hash, row.created_at);
      return Promise.resolve();
    },
    revokeKey(tenantId, keyId) {
      const r = q(
        "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND tenant_id = ? AND revoked_at IS NULL",
      ).run(new Date().toISOString(), keyId, tenantId);
      return Promise.resolve(Number(r.changes) === 1);
    },
    findKey(hash) {
      const r = q(
        "SELECT id, tenant_id, name, hash, created_at FROM api_keys WHERE hash = ? AND revoked_at IS NULL",
      ).get(hash) as Row | undefined;
      return Promise.resolve(r ? (r as unknown as KeyRow) : null);
    },
    liveKeyHashes(tenantId) {
      const rows = q(
        "SELECT hash FROM api_keys WHERE tenant_id = ? AND revoked_at IS NULL ORDER BY id",
      ).all(tenantId) as Row[];
      return Promise.resolve(rows.map((r) => String(r.hash)));
    },
    listKeys(tenantId) {
      const rows = q(
        "SELECT id, name, created_at, revoked_at FROM api_keys WHERE tenant_id = ? ORDER BY created_at, id",
      ).all(tenantId) as Row[];
      return Promise.resolve(rows.map(keyInfo));
    },
    tenantForKey(hash) {
      const r = q(
        "SELECT t.* FROM api_keys k JOIN tenants t ON t.id = k.tenant_id WHERE k.hash = ? AND k.revoked_at IS NULL",
      ).get(hash);
      return Promise.resolve(r ? tenantRow(r as Row) : null);
    },
  };
}

/** A key row as an admin sees it. */
function keyInfo(r: Row): KeyInfo {
  return {
    id: String(r.id),
    name: r.name === null ? null : String(r.name),
    created_at: String(r.created_at),
    revoked_at: r.revoked_at === null ? null : String(r.revoked_at),
  };
}
