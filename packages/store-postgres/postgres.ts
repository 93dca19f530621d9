/**
 * The PostgreSQL store (npm `postgres`): the one for several `hookbox serve`
 * processes behind a load balancer. Everything a process caches is keyed on
 * `hooks_generation`, bumped in the same transaction as every hook change, so
 * an upload or rollback through one process is served by all on their next
 * event; keys are looked up on every request, so a revoked key stops working
 * everywhere at once; quota usage is counted in a table all processes share.
 *
 * @module
 */
import postgres from "postgres";
import type { Manifest } from "../core/schema/manifest.ts";
import type { HookRow, Store, TenantPolicy, TenantRow } from "../store/store.ts";
import { ReadCoalescer } from "../store/coalesce.ts";
import { guarded } from "../store/guard.ts";
import { auditMethods } from "./_postgres_audit.ts";
import { GENERATION, type PgContext, type Tx } from "./_postgres_context.ts";
import { hookMethods } from "./_postgres_hooks.ts";
import { migrate } from "./_postgres_migrations.ts";
import { quotaMethods } from "./_postgres_quotas.ts";
import { replayMethods } from "./_postgres_replay.ts";
import { tenantMethods } from "./_postgres_tenants.ts";
import { hookFromRow, type Row } from "../store/rows.ts";

/** Seconds a connection may take to open before the request that needs it fails. */
const CONNECT_TIMEOUT_S = 5;

/** Opens a PostgreSQL store on `url` (`postgres://user@host:port/db`). */
export function openPostgresStore(url: string): Store {
  const sql = postgres(url, {
    max: 8,
    // A database that is restarting or gone: a request fails (503) within seconds instead of
    // waiting out postgres.js's 30 s default (a load balancer gave up on it first: 504).
    connect_timeout: CONNECT_TIMEOUT_S,
    onnotice: () => {},
    types: { bigint: postgres.BigInt },
    connection: { application_name: "hookbox" },
  });
  // Audit reads (tenants' filtered scans) get a pool of their own, so they can only queue
  // behind each other, never in front of the writes and reads that answer events.
  const reads = postgres(url, {
    max: 2,
    connect_timeout: CONNECT_TIMEOUT_S,
    onnotice: () => {},
    types: { bigint: postgres.BigInt },
    connection: { application_name: "hookbox-audit-reads" },
  });
  const bump = (tx: Tx) => tx`UPDATE meta SET value = value + 1 WHERE key = 'hooks_generation'`;
  const hookRow = (r: Row): HookRow =>
    hookFromRow(
      r,
      r.manifest as Manifest,
      r.enabled as boolean,
      r.sources as Record<string, string>,
    );
  const one = async (q: postgres.Sql | Tx, tenantId: string, name: string) => {
    const [r] = await q`
      SELECT h.tenant_id, h.name, h.enabled, v.version, v.sha256, v.runtime, v.size_bytes,
             v.manifest, v.body, v.built_from, v.sources, v.created_at
      FROM hooks h JOIN hook_versions v
        ON v.tenant_id = h.tenant_id AND v.name = h.name AND v.version = h.active_version
      WHERE h.tenant_id = ${tenantId} AND h.name = ${name}`;
    return r ? hookRow(r) : null;
  };
  const tenantRow = (r: Row): TenantRow => ({
    id: r.id as string,
    policy: r.policy as TenantPolicy,
    created_at: r.created_at as string,
  });

  // Every request asks for its key's tenant and the hooks generation: the
  // requests of one round share one query (see ReadCoalescer).
  const catalog = new ReadCoalescer<string, TenantRow | number | null>(async (keys) => {
    const hashes = keys.filter((k) => k !== GENERATION).map((k) => k.slice(2));
    const [r] = await sql`SELECT
        (SELECT value FROM meta WHERE key = 'hooks_generation') AS generation,
        (SELECT COALESCE(json_agg(json_build_object(
           'hash', k.hash, 'id', t.id, 'policy', t.policy, 'created_at', t.created_at)), '[]')
         FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
         WHERE k.hash = ANY(${hashes}::text[]) AND k.revoked_at IS NULL) AS tenants`;
    const found = new Map<string, TenantRow>();
    for (const t of r!.tenants as Row[]) found.set(t.hash as string, tenantRow(t));
    return (key) => key === GENERATION ? Number(r!.generation) : found.get(key.slice(2)) ?? null;
  });

  const c: PgContext = { sql, reads, bump, hookRow, one, tenantRow, catalog };
  return guarded({
    kind: "postgres",
    migrate: () => migrate(sql),
    async ping() {
      await sql`SELECT 1`;
    },
    async close() {
      await Promise.all([sql.end({ timeout: 5 }), reads.end({ timeout: 5 })]);
    },
    ...tenantMethods(c),
    ...hookMethods(c),
    ...auditMethods(c),
    ...quotaMethods(c),
    ...replayMethods(c),
  });
}
