/**
 * The PostgreSQL store (`postgres.ts`): hooks, their versions and the blobs they are built from.
 *
 * @module
 */
import type postgres from "postgres";
import type { Manifest } from "../core/schema/manifest.ts";
import {
  BLOB_PART_BYTES,
  capsRefusal,
  type HookDetail,
  type HookRow,
  type RollbackResult,
  type Store,
  VersionRefused,
} from "../store/store.ts";
import { GENERATION, type PgContext } from "./_postgres_context.ts";
import { headFields } from "../store/rows.ts";
import { concatBytes } from "../core/bytes.ts";

/**
 * Blobs over `BLOB_PART_BYTES` are stored in parts of this many bytes here:
 * postgres.js encodes a `bytea` as hex text on the calling thread, which
 * answers events, and a mebibyte's part held it 5–10 ms (another tenant's
 * p99 50–56 ms during 60 MiB uploads; 33–37 ms with 256 KiB parts).
 */
const PART_BYTES = 256 * 1024;
/** A manifest's priority when it names none (what the manifest schema fills in). */
const DEFAULT_PRIORITY = 100;
/** A blob stored in parts has no bytes in its own row. */
const NO_BYTES = new Uint8Array(0);

/** The store's methods for hooks, their versions and the blobs they are built from. */
export function hookMethods(c: PgContext): Pick<
  Store,
  | "putBlob"
  | "sweepBlobs"
  | "storedBytes"
  | "pruneVersions"
  | "getBlob"
  | "addHookVersion"
  | "listHooks"
  | "listHookItems"
  | "listHookHeads"
  | "activeHook"
  | "getVersion"
  | "getHook"
  | "setEnabled"
  | "rollback"
  | "deleteHook"
  | "hooksGeneration"
> {
  const { sql, bump, hookRow, one } = c;
  /** Version `version` of the hook, active or not. */
  const versionRow = async (
    q: postgres.Sql | postgres.TransactionSql,
    tenantId: string,
    name: string,
    version: number,
  ): Promise<HookRow | null> => {
    const [r] = await q`
      SELECT h.tenant_id, h.name, h.enabled, v.version, v.sha256, v.runtime, v.size_bytes,
             v.manifest, v.body, v.built_from, v.sources, v.created_at
      FROM hooks h JOIN hook_versions v ON v.tenant_id = h.tenant_id AND v.name = h.name
      WHERE h.tenant_id = ${tenantId} AND h.name = ${name} AND v.version = ${version}`;
    return r ? hookRow(r) : null;
  };
  return {
    async putBlob(sha256, bytes) {
      const now = Date.now();
      // Stored already (another upload of the same file): only marked stored now.
      const renewed = await sql`UPDATE blobs SET stored_at = ${now} WHERE sha256 = ${sha256}`;
      if (renewed.count > 0) return;
      const parts = bytes.byteLength > BLOB_PART_BYTES
        ? Math.ceil(bytes.byteLength / PART_BYTES)
        : 0;
      // A part at a time: each is encoded for the wire on this thread, which answers every
      // tenant's events (a 64 MiB blob in one statement held it for a quarter of a second).
      for (let part = 0; part < parts; part++) {
        const at = part * PART_BYTES;
        await sql`INSERT INTO blob_parts (sha256, part, stored_at, bytes)
          VALUES (${sha256}, ${part}, ${now}, ${bytes.subarray(at, at + PART_BYTES)})
          ON CONFLICT (sha256, part) DO UPDATE SET stored_at = EXCLUDED.stored_at`;
      }
      await sql`INSERT INTO blobs (sha256, bytes, stored_at, parts)
        VALUES (${sha256}, ${parts > 0 ? NO_BYTES : bytes}, ${now}, ${parts})
        ON CONFLICT (sha256) DO UPDATE SET stored_at = EXCLUDED.stored_at`;
    },
    async sweepBlobs(before) {
      const r = await sql`DELETE FROM blobs WHERE stored_at < ${before}
        AND sha256 NOT IN (SELECT sha256 FROM hook_versions)
        AND sha256 NOT IN (SELECT s.value FROM hook_versions v, jsonb_each_text(v.sources) s)`;
      // The parts no blob counts (its blob deleted, or an upload that never finished); a part
      // written since `before` (an upload under way) is kept.
      await sql`DELETE FROM blob_parts p WHERE p.stored_at < ${before}
        AND NOT EXISTS (SELECT 1 FROM blobs b WHERE b.sha256 = p.sha256)`;
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
                            WHERE tenant_id = ${tenantId} AND name = ${name})
        AND version NOT IN (SELECT version FROM shadows
                            WHERE tenant_id = ${tenantId} AND name = ${name})`;
      return r.count;
    },
    async getBlob(sha256) {
      const [r] = await sql`SELECT bytes, parts FROM blobs WHERE sha256 = ${sha256}`;
      if (!r) return null;
      const parts = Number(r.parts);
      if (parts === 0) return new Uint8Array(r.bytes as Uint8Array);
      const pieces: Uint8Array[] = [];
      for (let part = 0; part < parts; part++) {
        const [p] = await sql`SELECT bytes FROM blob_parts
          WHERE sha256 = ${sha256} AND part = ${part}`;
        if (!p) return null; // swept meanwhile
        pieces.push(p.bytes as Uint8Array);
      }
      return concatBytes(pieces, pieces.reduce((n, p) => n + p.byteLength, 0));
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
        if (v.stage && (await one(tx, tenantId, name)) === null) {
          throw new VersionRefused(
            "HOOK_NOT_FOUND",
            `"${name}" has no active version to stage beside`,
          );
        }
        // Serialises concurrent uploads of one hook (the version number is max + 1).
        await tx`SELECT pg_advisory_xact_lock(hashtext(${`${tenantId}/${name}`}))`;
        const [max] = await tx`SELECT COALESCE(MAX(version), 0) AS v FROM hook_versions
          WHERE tenant_id = ${tenantId} AND name = ${name}`;
        const version = Number(max!.v) + 1;
        await tx`INSERT INTO hook_versions (tenant_id, name, version, sha256, runtime, size_bytes,
            manifest, body, built_from, sources, created_at, stored_bytes, triggers, priority)
          VALUES (${tenantId}, ${name}, ${version}, ${v.sha256}, ${v.runtime}, ${v.size_bytes},
            ${tx.json(v.manifest as unknown as postgres.JSONValue)}, ${v.body}, ${v.built_from},
            ${tx.json(v.sources)}, ${v.created_at}, ${v.stored_bytes ?? 0},
            ${JSON.stringify(v.manifest.trigger ?? [])}, ${
          v.manifest.priority ?? DEFAULT_PRIORITY
        })`;
        if (v.stage) return (await versionRow(tx, tenantId, name, version))!;
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
      // The two fields a listing shows, kept beside the manifest: never the whole manifest,
      // which PostgreSQL would decompress for every row.
      const rows = await sql`SELECT h.tenant_id, h.name, h.enabled, v.version, v.sha256,
          v.triggers, v.priority
        FROM hooks h JOIN hook_versions v
          ON v.tenant_id = h.tenant_id AND v.name = h.name AND v.version = h.active_version
        WHERE h.tenant_id = ${tenantId} ORDER BY h.name`;
      return rows.map((r) => ({
        ...headFields(r, r.enabled as boolean),
        manifest: {
          trigger: JSON.parse(r.triggers as string) as Manifest["trigger"],
          priority: Number(r.priority),
        },
      }));
    },
    async listHookHeads(tenantId) {
      const rows = await activeHeads(sql, tenantId, "created_at");
      return rows.map((r) => ({
        ...headFields(r, r.enabled as boolean),
        created_at: r.created_at as string,
      }));
    },
    getVersion(tenantId, name, version) {
      return versionRow(sql, tenantId, name, version);
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
        await tx`DELETE FROM shadows WHERE tenant_id = ${tenantId} AND name = ${name}`;
        await tx`DELETE FROM shadow_runs WHERE tenant_id = ${tenantId} AND name = ${name}`;
        await bump(tx);
        return true;
      });
    },
    async hooksGeneration() {
      return await c.catalog.get(GENERATION) as number;
    },
  };
}

/** A tenant's active versions: the head columns and one more of the version's. */
function activeHeads(sql: postgres.Sql, tenantId: string, column: "created_at") {
  return sql`SELECT h.tenant_id, h.name, h.enabled, v.version, v.sha256, ${sql(`v.${column}`)}
    FROM hooks h JOIN hook_versions v
      ON v.tenant_id = h.tenant_id AND v.name = h.name AND v.version = h.active_version
    WHERE h.tenant_id = ${tenantId} ORDER BY h.name`;
}
