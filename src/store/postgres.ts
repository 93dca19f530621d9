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
import type { Manifest } from "../schema/manifest.ts";
import type {
  AuditPage,
  AuditQuery,
  AuditRow,
  HookDetail,
  HookRow,
  KeyRow,
  RollbackResult,
  Store,
  TenantPolicy,
  TenantRow,
} from "../server/store.ts";
import { capsRefusal } from "../server/store.ts";
import { ReadCoalescer } from "./_coalesce.ts";
import { decodeCursor } from "./_cursor.ts";
import { guarded } from "./_guard.ts";
import { auditPage, headFields, hookFromRow, pageBySize, type Row, scanBound } from "./_rows.ts";

/** Versioned schema migrations; each runs once, in order, under an advisory lock. */
const MIGRATIONS: string[] = [
  `CREATE TABLE tenants (
     id TEXT PRIMARY KEY, policy JSONB NOT NULL, created_at TEXT NOT NULL);
   CREATE TABLE api_keys (
     id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
     name TEXT, hash TEXT NOT NULL UNIQUE, created_at TEXT NOT NULL, revoked_at TEXT);
   CREATE TABLE blobs (sha256 TEXT PRIMARY KEY, bytes BYTEA NOT NULL);
   CREATE TABLE hooks (
     tenant_id TEXT NOT NULL, name TEXT NOT NULL, active_version INTEGER NOT NULL,
     enabled BOOLEAN NOT NULL, PRIMARY KEY (tenant_id, name));
   CREATE TABLE hook_versions (
     tenant_id TEXT NOT NULL, name TEXT NOT NULL, version INTEGER NOT NULL,
     sha256 TEXT NOT NULL, runtime TEXT NOT NULL, size_bytes INTEGER NOT NULL,
     manifest JSONB NOT NULL, body TEXT NOT NULL, built_from TEXT NOT NULL,
     created_at TEXT NOT NULL, PRIMARY KEY (tenant_id, name, version));
   CREATE TABLE meta (key TEXT PRIMARY KEY, value BIGINT NOT NULL);
   INSERT INTO meta VALUES ('hooks_generation', 0);
   CREATE TABLE audit (
     seq BIGSERIAL PRIMARY KEY, decision_id TEXT NOT NULL UNIQUE,
     tenant_id TEXT NOT NULL, at TEXT NOT NULL, session_id TEXT NOT NULL,
     event_type TEXT NOT NULL, decision TEXT NOT NULL, reason TEXT, blocked_by TEXT,
     dry_run BOOLEAN NOT NULL, hooks JSONB NOT NULL);
   CREATE INDEX audit_tenant ON audit (tenant_id, seq);
   CREATE TABLE usage (
     tenant_id TEXT NOT NULL, window_start BIGINT NOT NULL, events BIGINT NOT NULL,
     fuel BIGINT NOT NULL, PRIMARY KEY (tenant_id, window_start));`,
  `ALTER TABLE hook_versions ADD COLUMN sources JSONB NOT NULL DEFAULT '{}';`,
  `CREATE TABLE leases (
     tenant_id TEXT NOT NULL, lease_id TEXT NOT NULL, expires_at BIGINT NOT NULL,
     PRIMARY KEY (tenant_id, lease_id));`,
  `ALTER TABLE hook_versions ADD COLUMN stored_bytes BIGINT NOT NULL DEFAULT 0;
   ALTER TABLE blobs ADD COLUMN stored_at BIGINT NOT NULL DEFAULT 0;`,
];

/** Seconds a connection may take to open before the request that needs it fails. */
const CONNECT_TIMEOUT_S = 5;

/** Arbitrary key of the advisory lock that serialises migrations. */
const MIGRATION_LOCK = 0x686f6f6b;

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
  type Tx = postgres.TransactionSql;
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
  // Keys of a round: "g" for the generation, "k:" + hash for a key.
  const GENERATION = "g";
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

  /** A tenant's active versions: the head columns and one more of the version's. */
  const activeHeads = (tenantId: string, column: "manifest" | "created_at") =>
    sql`SELECT h.tenant_id, h.name, h.enabled, v.version, v.sha256, ${sql(`v.${column}`)}
      FROM hooks h JOIN hook_versions v
        ON v.tenant_id = h.tenant_id AND v.name = h.name AND v.version = h.active_version
      WHERE h.tenant_id = ${tenantId} ORDER BY h.name`;
  return guarded({
    kind: "postgres",
    async migrate() {
      await sql.begin(async (tx) => {
        await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
        await tx`CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)`;
        const [done] = await tx`SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations`;
        for (let v = Number(done!.v) + 1; v <= MIGRATIONS.length; v++) {
          await tx.unsafe(MIGRATIONS[v - 1]!);
          await tx`INSERT INTO schema_migrations (version) VALUES (${v})`;
        }
      });
    },
    async ping() {
      await sql`SELECT 1`;
    },
    async close() {
      await Promise.all([sql.end({ timeout: 5 }), reads.end({ timeout: 5 })]);
    },

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
    async tenantForKey(hash) {
      return await catalog.get(`k:${hash}`) as TenantRow | null;
    },

    async putBlob(sha256, bytes) {
      await sql`INSERT INTO blobs (sha256, bytes, stored_at) VALUES (${sha256}, ${bytes}, ${Date.now()})
        ON CONFLICT (sha256) DO UPDATE SET stored_at = EXCLUDED.stored_at`;
    },
    async sweepBlobs(before) {
      const r = await sql`DELETE FROM blobs WHERE stored_at < ${before}
        AND sha256 NOT IN (SELECT sha256 FROM hook_versions)
        AND sha256 NOT IN (SELECT s.value FROM hook_versions v, jsonb_each_text(v.sources) s)`;
      return r.count;
    },
    async storedBytes(tenantId) {
      const [r] = await sql`SELECT COALESCE(SUM(stored_bytes), 0) AS n FROM hook_versions
        WHERE tenant_id = ${tenantId}`;
      return Number(r!.n);
    },
    async pruneVersions(tenantId, name, keep) {
      const r = await sql`DELETE FROM hook_versions WHERE tenant_id = ${tenantId} AND name = ${name}
        AND version NOT IN (SELECT version FROM hook_versions
                            WHERE tenant_id = ${tenantId} AND name = ${name}
                            ORDER BY version DESC LIMIT ${keep})
        AND version NOT IN (SELECT active_version FROM hooks
                            WHERE tenant_id = ${tenantId} AND name = ${name})`;
      return r.count;
    },
    async getBlob(sha256) {
      const [r] = await sql`SELECT bytes FROM blobs WHERE sha256 = ${sha256}`;
      return r ? new Uint8Array(r.bytes as Uint8Array) : null;
    },

    addHookVersion(tenantId, name, v) {
      return sql.begin(async (tx) => {
        if (v.caps) {
          // The tenant's row, locked: uploads of one tenant on every instance take turns here,
          // and a deletion of the tenant waits for (or is seen by) this one.
          const [tenant] =
            await tx`SELECT created_at FROM tenants WHERE id = ${tenantId} FOR UPDATE`;
          const [counts] = await tx`SELECT
              (SELECT COUNT(*) FROM hooks WHERE tenant_id = ${tenantId}) AS hooks,
              (SELECT COUNT(*) FROM hooks WHERE tenant_id = ${tenantId} AND name = ${name}) AS known,
              (SELECT COALESCE(SUM(stored_bytes), 0) FROM hook_versions
                WHERE tenant_id = ${tenantId}) AS bytes`;
          const refused = capsRefusal(v.caps, {
            createdAt: tenant ? String(tenant.created_at) : null,
            hooks: Number(counts!.hooks),
            known: Number(counts!.known) > 0,
            bytes: Number(counts!.bytes),
          }, v.stored_bytes ?? 0);
          if (refused) throw refused;
        }
        // Serialises concurrent uploads of one hook (the version number is max + 1).
        await tx`SELECT pg_advisory_xact_lock(hashtext(${`${tenantId}/${name}`}))`;
        const [max] = await tx`SELECT COALESCE(MAX(version), 0) AS v FROM hook_versions
          WHERE tenant_id = ${tenantId} AND name = ${name}`;
        const version = Number(max!.v) + 1;
        await tx`INSERT INTO hook_versions (tenant_id, name, version, sha256, runtime, size_bytes,
            manifest, body, built_from, sources, created_at, stored_bytes)
          VALUES (${tenantId}, ${name}, ${version}, ${v.sha256}, ${v.runtime}, ${v.size_bytes},
            ${tx.json(v.manifest as unknown as postgres.JSONValue)}, ${v.body}, ${v.built_from},
            ${tx.json(v.sources)}, ${v.created_at}, ${v.stored_bytes ?? 0})`;
        await tx`INSERT INTO hooks (tenant_id, name, active_version, enabled)
          VALUES (${tenantId}, ${name}, ${version}, true)
          ON CONFLICT (tenant_id, name) DO UPDATE SET active_version = EXCLUDED.active_version,
            enabled = true`;
        await bump(tx);
        return (await one(tx, tenantId, name))!;
      });
    },
    async listHooks(tenantId) {
      const rows = await sql`
        SELECT h.tenant_id, h.name, h.enabled, v.version, v.sha256, v.runtime, v.size_bytes,
               v.manifest, v.body, v.built_from, v.sources, v.created_at
        FROM hooks h JOIN hook_versions v
          ON v.tenant_id = h.tenant_id AND v.name = h.name AND v.version = h.active_version
        WHERE h.tenant_id = ${tenantId} ORDER BY h.name`;
      return rows.map(hookRow);
    },
    async listHookItems(tenantId) {
      const rows = await activeHeads(tenantId, "manifest");
      return rows.map((r) => ({
        ...headFields(r, r.enabled as boolean),
        manifest: r.manifest as Manifest,
      }));
    },
    async listHookHeads(tenantId) {
      const rows = await activeHeads(tenantId, "created_at");
      return rows.map((r) => ({
        ...headFields(r, r.enabled as boolean),
        created_at: r.created_at as string,
      }));
    },
    activeHook(tenantId, name) {
      return one(sql, tenantId, name);
    },
    async getHook(tenantId, name) {
      const row = await one(sql, tenantId, name);
      if (!row) return null;
      const versions = await sql`SELECT version, sha256, created_at FROM hook_versions
        WHERE tenant_id = ${tenantId} AND name = ${name} ORDER BY version`;
      return {
        ...row,
        versions: versions.map((v) => ({
          version: Number(v.version),
          sha256: v.sha256 as string,
          created_at: v.created_at as string,
        })),
      } satisfies HookDetail;
    },
    setEnabled(tenantId, name, enabled) {
      return sql.begin(async (tx) => {
        const r = await tx`UPDATE hooks SET enabled = ${enabled}
          WHERE tenant_id = ${tenantId} AND name = ${name}`;
        if (r.count === 0) return null;
        await bump(tx);
        return await one(tx, tenantId, name);
      });
    },
    rollback(tenantId, name, version): Promise<RollbackResult> {
      return sql.begin(async (tx): Promise<RollbackResult> => {
        if (!(await one(tx, tenantId, name))) return "no-hook";
        const [exists] = await tx`SELECT 1 FROM hook_versions
          WHERE tenant_id = ${tenantId} AND name = ${name} AND version = ${version}`;
        if (!exists) return "no-version";
        await tx`UPDATE hooks SET active_version = ${version}
          WHERE tenant_id = ${tenantId} AND name = ${name}`;
        await bump(tx);
        return "ok";
      });
    },
    deleteHook(tenantId, name) {
      return sql.begin(async (tx) => {
        const r = await tx`DELETE FROM hooks WHERE tenant_id = ${tenantId} AND name = ${name}`;
        if (r.count === 0) return false;
        await tx`DELETE FROM hook_versions WHERE tenant_id = ${tenantId} AND name = ${name}`;
        await bump(tx);
        return true;
      });
    },
    async hooksGeneration() {
      return await catalog.get(GENERATION) as number;
    },

    async appendAudit(rows: AuditRow[]) {
      if (rows.length === 0) return [];
      const guarded = rows.filter((a) => a.tenant_created_at !== undefined);
      if (guarded.length === 0) {
        await insertAudit(sql, rows);
        return [];
      }
      return await sql.begin(async (tx) => {
        // The tenants' rows, shared-locked: a deletion waits for this commit, or this sees it.
        const ids = [...new Set(guarded.map((a) => a.tenant_id))];
        const found = await tx`SELECT id, created_at FROM tenants WHERE id = ANY(${ids}) FOR SHARE`;
        const born = new Map(found.map((r) => [String(r.id), String(r.created_at)]));
        const gone = new Set(
          guarded.filter((a) => born.get(a.tenant_id) !== a.tenant_created_at)
            .map((a) => a.decision_id),
        );
        const kept = rows.filter((a) => !gone.has(a.decision_id));
        if (kept.length > 0) await insertAudit(tx, kept);
        return [...gone];
      });
    },
    async readAudit(query: AuditQuery): Promise<AuditPage> {
      // On connections of their own: 32 filtered audit reads at once took every connection of
      // the pool, and another tenant's events waited seconds for one.
      // The rows a page looks at: the tenant's, below the cursor, newest first
      // (its index), at most `scan` of them when a filter is given.
      const scope = [reads`tenant_id = ${query.tenant_id}`];
      if (query.cursor !== undefined) scope.push(reads`seq < ${decodeCursor(query.cursor)}`);
      const conds = [reads`true`];
      if (query.session_id !== undefined) conds.push(reads`session_id = ${query.session_id}`);
      if (query.event_type !== undefined) conds.push(reads`event_type = ${query.event_type}`);
      if (query.decision !== undefined) conds.push(reads`decision = ${query.decision}`);
      if (query.since !== undefined) conds.push(reads`at >= ${query.since}`);
      if (query.hook !== undefined || query.outcome !== undefined) {
        const inner = [reads`true`];
        if (query.hook !== undefined) inner.push(reads`h->>'name' = ${query.hook}`);
        if (query.outcome !== undefined) inner.push(reads`h->>'outcome' = ${query.outcome}`);
        conds.push(
          reads`EXISTS (SELECT 1 FROM jsonb_array_elements(w.hooks) h WHERE ${and(inner, reads)})`,
        );
      }
      const scan = conds.length > 1 ? scanBound(query.scan) : null;
      const bytes = scanBound(query.bytes);
      const candidates = reads`FROM (SELECT * FROM audit WHERE ${and(scope, reads)}
        ORDER BY seq DESC ${scan === null ? reads`` : reads`LIMIT ${scan}`}) AS w
        WHERE ${and(conds, reads)} ORDER BY seq DESC LIMIT ${query.limit + 1}`;
      let rows: Row[];
      let more: boolean;
      // Rows of the page deleted between the two reads (retention) leave no last row to go on
      // from: the page then ends at the last row that fitted.
      let gone: number | null = null;
      if (bytes === null) {
        rows = await reads`SELECT * ${candidates}`;
        more = rows.length > query.limit;
      } else {
        // Sizes first (measured by the database), then only the rows that fit.
        const sized = await reads`SELECT seq, octet_length(hooks::text) +
          COALESCE(octet_length(reason), 0) + octet_length(session_id) AS size ${candidates}`;
        const fit = pageBySize(sized, query.limit, bytes);
        more = fit.more;
        rows = fit.seqs.length === 0 ? [] : await reads`SELECT * FROM audit
          WHERE tenant_id = ${query.tenant_id} AND seq IN ${reads(fit.seqs)} ORDER BY seq DESC`;
        if (rows.length === 0 && fit.seqs.length > 0) [more, gone] = [false, fit.seqs.at(-1)!];
      }
      let scannedTo: number | null = gone;
      if (scannedTo === null && scan !== null && !more) {
        // Stopped at the bound with rows left below it: the next page goes on from there.
        const [seen] = await reads`SELECT COUNT(*) AS n, MIN(seq) AS oldest FROM (SELECT seq
          FROM audit WHERE ${and(scope, reads)} ORDER BY seq DESC LIMIT ${scan}) AS s`;
        if (Number(seen!.n) === scan) scannedTo = Number(seen!.oldest);
      }
      return auditPage(
        rows,
        query.limit,
        (r) => ({
          hooks: r.hooks as AuditRow["hooks"],
          dryRun: r.dry_run as boolean,
        }),
        scannedTo,
        more,
      );
    },
    async pruneAudit(tenantId, before) {
      const r = await sql`DELETE FROM audit WHERE tenant_id = ${tenantId} AND at < ${before}`;
      return r.count;
    },
    async countAudit(tenantId) {
      const [r] = await sql`SELECT COUNT(*) AS n FROM audit WHERE tenant_id = ${tenantId}`;
      return Number(r!.n);
    },
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
  });

  /** Inserts audit rows (a batch sent twice is stored once). */
  async function insertAudit(q: postgres.Sql | postgres.TransactionSql, rows: AuditRow[]) {
    const values = rows.map((a) => ({
      decision_id: a.decision_id,
      tenant_id: a.tenant_id,
      at: a.at,
      session_id: a.session_id,
      event_type: a.event_type,
      decision: a.decision,
      reason: a.reason,
      blocked_by: a.blocked_by,
      dry_run: a.dry_run,
      hooks: q.json(a.hooks as unknown as postgres.JSONValue),
    }));
    await q`INSERT INTO audit ${
      q(
        values,
        "decision_id",
        "tenant_id",
        "at",
        "session_id",
        "event_type",
        "decision",
        "reason",
        "blocked_by",
        "dry_run",
        "hooks",
      )
    } ON CONFLICT (decision_id) DO NOTHING`;
  }

  function and(parts: postgres.PendingQuery<postgres.Row[]>[], q: postgres.Sql = sql) {
    return parts.reduce((acc, part) => q`${acc} AND ${part}`);
  }
}
