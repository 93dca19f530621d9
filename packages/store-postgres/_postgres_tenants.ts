/**
 * The PostgreSQL store (`postgres.ts`): tenants and their API keys.
 *
 * @module
 */
import type postgres from "postgres";
import type { KeyRow, Store, TenantRow } from "../store/store.ts";
import type { PgContext } from "./_postgres_context.ts";

/** The store's methods for tenants and their API keys. */
export function tenantMethods(c: PgContext): Pick<
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
  const { sql, bump, tenantRow, catalog } = c;
  return {
    async createTenant(row) {
      const r = await sql`INSERT INTO tenants (id, policy, created_at)
        VALUES (${row.id}, ${sql.json(row.policy as postgres.JSONValue)}, ${row.created_at})
        ON CONFLICT DO NOTHING`;
      return r.count === 1;
    },
    async getTenant(id) {
      const [r] = await sql`SELECT * FROM tenants WHERE id = ${id}`;
      return r ? tenantRow(r) : null;
    },
    async listTenants() {
      return (await sql`SELECT * FROM tenants ORDER BY id`).map(tenantRow);
    },
    deleteTenant(id) {
      return sql.begin(async (tx) => {
        const r = await tx`DELETE FROM tenants WHERE id = ${id}`;
        if (r.count === 0) return false;
        await tx`DELETE FROM hooks WHERE tenant_id = ${id}`;
        await tx`DELETE FROM hook_versions WHERE tenant_id = ${id}`;
        await tx`DELETE FROM audit WHERE tenant_id = ${id}`;
        await tx`DELETE FROM usage WHERE tenant_id = ${id}`;
        await tx`DELETE FROM leases WHERE tenant_id = ${id}`;
        await tx`DELETE FROM captures WHERE tenant_id = ${id}`;
        await tx`DELETE FROM shadows WHERE tenant_id = ${id}`;
        await tx`DELETE FROM shadow_runs WHERE tenant_id = ${id}`;
        await bump(tx);
        return true;
      });
    },
    async setPolicy(id, policy) {
      const r = await sql`UPDATE tenants SET policy = ${sql.json(policy as postgres.JSONValue)}
        WHERE id = ${id}`;
      return r.count === 1;
    },
    async createKey(row) {
      await sql`INSERT INTO api_keys (id, tenant_id, name, hash, created_at)
        VALUES (${row.id}, ${row.tenant_id}, ${row.name}, ${row.hash}, ${row.created_at})`;
    },
    async revokeKey(tenantId, keyId) {
      const r = await sql`UPDATE api_keys SET revoked_at = ${new Date().toISOString()}
        WHERE id = ${keyId} AND tenant_id = ${tenantId} AND revoked_at IS NULL`;
      return r.count === 1;
    },
    async findKey(hash) {
      const [r] = await sql`SELECT id, tenant_id, name, hash, created_at FROM api_keys
        WHERE hash = ${hash} AND revoked_at IS NULL`;
      return r ? (r as unknown as KeyRow) : null;
    },
    async liveKeyHashes(tenantId) {
      const rows = await sql`SELECT hash FROM api_keys
        WHERE tenant_id = ${tenantId} AND revoked_at IS NULL ORDER BY id`;
      return rows.map((r) => String(r.hash));
    },
    async listKeys(tenantId) {
      const rows = await sql`SELECT id, name, created_at, revoked_at FROM api_keys
        WHERE tenant_id = ${tenantId} ORDER BY created_at, id`;
      return rows.map((r) => ({
        id: String(r.id),
        name: r.name === null ? null : String(r.name),
        created_at: String(r.created_at),
        revoked_at: r.revoked_at === null ? null : String(r.revoked_at),
      }));
    },
    async tenantForKey(hash) {
      return await catalog.get(`k:${hash}`) as TenantRow | null;
    },
  };
}
