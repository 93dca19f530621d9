/**
 * The PostgreSQL store's schema: versioned migrations, each run once, in
 * order, under an advisory lock (several processes may start together).
 *
 * @module
 */
import type postgres from "postgres";
import {
  BLOB_PARTS_STORED_INDEX,
  BLOBS_STORED_INDEX,
  CAPTURES_TENANT_INDEX,
  HOOK_VERSIONS_HEAD_INDEX,
  HOOK_VERSIONS_ITEM_INDEX,
  SHADOW_RUNS_HOOK_INDEX,
} from "../store/migrations.ts";

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
  BLOBS_STORED_INDEX,
  HOOK_VERSIONS_HEAD_INDEX,
  `CREATE TABLE captures (
     seq BIGSERIAL PRIMARY KEY, tenant_id TEXT NOT NULL,
     decision_id TEXT NOT NULL UNIQUE, at TEXT NOT NULL, event_type TEXT NOT NULL,
     event TEXT NOT NULL);
   CREATE TABLE shadows (
     tenant_id TEXT NOT NULL, name TEXT NOT NULL, version INTEGER NOT NULL,
     started_at TEXT NOT NULL, runs BIGINT NOT NULL DEFAULT 0, agreed BIGINT NOT NULL DEFAULT 0,
     kept BIGINT NOT NULL DEFAULT 0, PRIMARY KEY (tenant_id, name));
   CREATE TABLE shadow_runs (
     seq BIGSERIAL PRIMARY KEY, tenant_id TEXT NOT NULL, name TEXT NOT NULL,
     version INTEGER NOT NULL, decision_id TEXT NOT NULL, at TEXT NOT NULL,
     agreed BOOLEAN NOT NULL, differs JSONB);`,
  CAPTURES_TENANT_INDEX,
  SHADOW_RUNS_HOOK_INDEX,
  `ALTER TABLE blobs ADD COLUMN parts INTEGER NOT NULL DEFAULT 0;
   CREATE TABLE blob_parts (
     sha256 TEXT NOT NULL, part INTEGER NOT NULL, stored_at BIGINT NOT NULL,
     bytes BYTEA NOT NULL, PRIMARY KEY (sha256, part));`,
  BLOB_PARTS_STORED_INDEX,
  `ALTER TABLE hook_versions ADD COLUMN triggers TEXT NOT NULL DEFAULT '[]',
     ADD COLUMN priority INTEGER NOT NULL DEFAULT 100;
   UPDATE hook_versions SET triggers = (manifest->'trigger')::text,
     priority = (manifest->>'priority')::int;`,
  HOOK_VERSIONS_ITEM_INDEX,
];

/** Arbitrary key of the advisory lock that serialises migrations. */
const MIGRATION_LOCK = 0x686f6f6b;

/** Runs the migrations `sql`'s database has not had yet. */
export async function migrate(sql: postgres.Sql): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)`;
    const [done] = await tx`SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations`;
    for (let v = Number(done!.v) + 1; v <= MIGRATIONS.length; v++) {
      await tx.unsafe(MIGRATIONS[v - 1]!);
      await tx`INSERT INTO schema_migrations (version) VALUES (${v})`;
    }
  });
}
