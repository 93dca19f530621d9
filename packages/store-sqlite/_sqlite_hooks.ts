/**
 * The embedded store (`sqlite.ts`): hooks, their versions and the content-addressed blobs they are built from.
 *
 * @module
 */
import type { HookDetail, HookRow, NewHookVersion, RollbackResult, Store } from "../store/store.ts";
import { BLOB_PART_BYTES, capsRefusal, VersionRefused } from "../store/store.ts";
import { headFields, type Row } from "../store/rows.ts";
import { concatBytes } from "../core/bytes.ts";
import type { Manifest } from "../core/schema/manifest.ts";
import { nextTurn, type SqliteContext, SWEEP_STEP } from "./_sqlite_context.ts";

/** A manifest's priority when it names none (what the manifest schema fills in). */
const DEFAULT_PRIORITY = 100;
/** A blob stored in parts has no bytes in its own row. */
const NO_BYTES = new Uint8Array(0);
/** Blob parts written between two waits for the checkpointer thread (see `putBlob`). */
const PARTS_PER_CATCH_UP = 4;
/** Blob parts one step of the sweep deletes (each frees a mebibyte's pages). */
const PARTS_SWEEP_STEP = 4;

/** The store's methods for hooks, their versions and the content-addressed blobs they are built from. */
export function hookMethods(
  c: SqliteContext,
): Pick<
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
  const { q, tx, bump, hookRow, HOOK_SELECT, one, readRows, checkpoints } = c;
  /** Version `version` of the hook, active or not. */
  const versionRow = (tenantId: string, name: string, version: number): HookRow | null => {
    const r = q(`SELECT h.tenant_id, h.name, h.enabled, v.version, v.sha256, v.runtime,
        v.size_bytes, v.manifest, v.body, v.built_from, v.sources, v.created_at
      FROM hooks h JOIN hook_versions v ON v.tenant_id = h.tenant_id AND v.name = h.name
      WHERE h.tenant_id = ? AND h.name = ? AND v.version = ?`).get(tenantId, name, version);
    return r ? hookRow(r as Row) : null;
  };
  return {
    async putBlob(sha256, bytes) {
      const now = Date.now();
      // Stored already (another upload of the same file): only marked stored now.
      if (Number(q("UPDATE blobs SET stored_at = ? WHERE sha256 = ?").run(now, sha256).changes)) {
        return;
      }
      const parts = bytes.byteLength > BLOB_PART_BYTES
        ? Math.ceil(bytes.byteLength / BLOB_PART_BYTES)
        : 0;
      // A part at a time, each its own commit, with a turn of the loop in between: this thread
      // answers every tenant's events, and a 64 MiB write would hold it for a fifth of a second.
      // Every few parts the checkpointer thread copies the log into the file first: written
      // faster than it copies, the log would pass the point where this connection copies it
      // itself, tens of milliseconds with an fsync (a 60 MiB upload held other tenants 100 ms).
      for (let part = 0; part < parts; part++) {
        if (part > 0 && part % PARTS_PER_CATCH_UP === 0) await checkpoints?.caughtUp();
        if (part > 0) await nextTurn();
        const at = part * BLOB_PART_BYTES;
        q(`INSERT INTO blob_parts (sha256, part, stored_at, bytes) VALUES (?, ?, ?, ?)
           ON CONFLICT (sha256, part) DO UPDATE SET stored_at = excluded.stored_at`)
          .run(sha256, part, now, bytes.subarray(at, at + BLOB_PART_BYTES));
        checkpoints?.committed();
      }
      if (parts > 0) await nextTurn();
      q(`INSERT INTO blobs (sha256, bytes, stored_at, parts) VALUES (?, ?, ?, ?)
         ON CONFLICT (sha256) DO UPDATE SET stored_at = excluded.stored_at`)
        .run(sha256, parts > 0 ? NO_BYTES : bytes, now, parts);
    },
    async sweepBlobs(before) {
      const doomed = q(`SELECT sha256 FROM blobs INDEXED BY blobs_stored WHERE stored_at < ?
          AND sha256 NOT IN (SELECT sha256 FROM hook_versions)
          AND sha256 NOT IN (SELECT j.value FROM hook_versions v, json_each(v.sources) j)`)
        .all(before).map((r) => (r as Row).sha256 as string);
      // A few at a time with a turn of the loop in between: freeing a blob's
      // pages reads them. A blob stored again since (an upload that will refer
      // to it) is kept.
      let removed = 0;
      for (let at = 0; at < doomed.length; at += SWEEP_STEP) {
        if (at > 0) await nextTurn();
        removed += tx(() =>
          doomed.slice(at, at + SWEEP_STEP).reduce(
            (n, sha) =>
              n +
              Number(
                q("DELETE FROM blobs WHERE sha256 = ? AND stored_at < ?").run(sha, before).changes,
              ),
            0,
          )
        );
      }
      // Then the parts no blob counts (its blob deleted, or an upload that never finished),
      // a few at a time. A part written since `before` (an upload under way) is kept.
      for (;;) {
        await nextTurn();
        const gone = q(`DELETE FROM blob_parts WHERE rowid IN (
            SELECT p.rowid FROM blob_parts p INDEXED BY blob_parts_stored WHERE p.stored_at < ?
              AND NOT EXISTS (SELECT 1 FROM blobs b WHERE b.sha256 = p.sha256) LIMIT ?)`)
          .run(before, PARTS_SWEEP_STEP).changes;
        if (Number(gone) === 0) break;
      }
      return removed;
    },
    storedBytes(tenantId) {
      const r = q(
        "SELECT COALESCE(SUM(stored_bytes), 0) AS n FROM hook_versions WHERE tenant_id = ?",
      )
        .get(tenantId) as Row;
      return Promise.resolve(Number(r.n));
    },
    pruneVersions(tenantId, name, keep) {
      const r = q(`DELETE FROM hook_versions WHERE tenant_id = ? AND name = ?
          AND version NOT IN (SELECT version FROM hook_versions WHERE tenant_id = ? AND name = ?
                              ORDER BY version DESC LIMIT ?)
          AND version NOT IN (SELECT active_version FROM hooks WHERE tenant_id = ? AND name = ?)
          AND version NOT IN (SELECT version FROM shadows WHERE tenant_id = ? AND name = ?)`)
        .run(tenantId, name, tenantId, name, keep, tenantId, name, tenantId, name);
      return Promise.resolve(Number(r.changes));
    },
    async getBlob(sha256) {
      const r = q("SELECT bytes, parts FROM blobs WHERE sha256 = ?").get(sha256) as Row | undefined;
      if (!r) return null;
      const parts = Number(r.parts);
      if (parts === 0) return new Uint8Array(r.bytes as Uint8Array);
      const pieces: Uint8Array[] = [];
      for (let part = 0; part < parts; part++) {
        if (part > 0) await nextTurn();
        const p = q("SELECT bytes FROM blob_parts WHERE sha256 = ? AND part = ?")
          .get(sha256, part) as Row | undefined;
        if (!p) return null; // swept meanwhile
        pieces.push(p.bytes as Uint8Array);
      }
      return concatBytes(pieces, pieces.reduce((n, p) => n + p.byteLength, 0));
    },

    addHookVersion(tenantId, name, v: NewHookVersion) {
      return Promise.resolve(tx(() => {
        if (v.caps) {
          // One writer at a time holds the file: the check and the insert are one step.
          const tenant = q("SELECT created_at FROM tenants WHERE id = ?").get(tenantId) as
            | Row
            | undefined;
          const counts = q(`SELECT
              (SELECT COUNT(*) FROM hooks WHERE tenant_id = ?) AS hooks,
              (SELECT COUNT(*) FROM hooks WHERE tenant_id = ? AND name = ?) AS known,
              (SELECT COALESCE(SUM(stored_bytes), 0) FROM hook_versions WHERE tenant_id = ?) AS bytes`)
            .get(tenantId, tenantId, name, tenantId) as Row;
          const refused = capsRefusal(v.caps, {
            createdAt: tenant ? String(tenant.created_at) : null,
            hooks: Number(counts.hooks),
            known: Number(counts.known) > 0,
            bytes: Number(counts.bytes),
          }, v.stored_bytes ?? 0);
          if (refused) throw refused;
        }
        if (v.stage && one(tenantId, name) === null) {
          throw new VersionRefused(
            "HOOK_NOT_FOUND",
            `"${name}" has no active version to stage beside`,
          );
        }
        const max = q(
          "SELECT COALESCE(MAX(version), 0) AS v FROM hook_versions WHERE tenant_id = ? AND name = ?",
        ).get(tenantId, name) as Row;
        const version = Number(max.v) + 1;
        q(`INSERT INTO hook_versions (tenant_id, name, version, sha256, runtime, size_bytes,
             manifest, body, built_from, sources, created_at, stored_bytes, triggers, priority)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
          tenantId,
          name,
          version,
          v.sha256,
          v.runtime,
          v.size_bytes,
          JSON.stringify(v.manifest),
          v.body,
          v.built_from,
          JSON.stringify(v.sources),
          v.created_at,
          v.stored_bytes ?? 0,
          JSON.stringify(v.manifest.trigger ?? []),
          v.manifest.priority ?? DEFAULT_PRIORITY,
        );
        if (v.stage) return versionRow(tenantId, name, version)!;
        q(`INSERT INTO hooks (tenant_id, name, active_version, enabled) VALUES (?, ?, ?, 1)
           ON CONFLICT (tenant_id, name) DO UPDATE SET active_version = excluded.active_version,
           enabled = 1`).run(tenantId, name, version);
        bump();
        return one(tenantId, name)!;
      }));
    },
    listHooks(tenantId) {
      const rows = q(`${HOOK_SELECT} WHERE h.tenant_id = ? ORDER BY h.name`).all(tenantId);
      return Promise.resolve(rows.map((r) => hookRow(r as Row)));
    },
    async listHookItems(tenantId) {
      // The two fields a listing shows, kept beside the manifest and read from an index
      // (hook_versions_item), on the checkpointer thread's connection.
      const rows = await readRows(
        `SELECT h.tenant_id, h.name, h.enabled, v.version, v.sha256, v.triggers, v.priority
        FROM hooks h JOIN hook_versions v INDEXED BY hook_versions_item
          ON v.tenant_id = h.tenant_id AND v.name = h.name AND v.version = h.active_version
        WHERE h.tenant_id = ? ORDER BY h.name`,
        [tenantId],
      );
      return rows.map((r) => ({
        ...headFields(r, r.enabled === 1),
        manifest: {
          trigger: JSON.parse(r.triggers as string) as Manifest["trigger"],
          priority: Number(r.priority),
        },
      }));
    },
    listHookHeads(tenantId) {
      const rows = q(`SELECT h.tenant_id, h.name, h.enabled, v.version, v.sha256, v.created_at
        FROM hooks h JOIN hook_versions v INDEXED BY hook_versions_head
          ON v.tenant_id = h.tenant_id AND v.name = h.name AND v.version = h.active_version
        WHERE h.tenant_id = ? ORDER BY h.name`).all(tenantId) as Row[];
      return Promise.resolve(rows.map((r) => ({
        ...headFields(r, r.enabled === 1),
        created_at: r.created_at as string,
      })));
    },
    getVersion(tenantId, name, version) {
      return Promise.resolve(versionRow(tenantId, name, version));
    },
    activeHook(tenantId, name) {
      return Promise.resolve(one(tenantId, name));
    },
    getHook(tenantId, name) {
      const row = one(tenantId, name);
      if (!row) return Promise.resolve(null);
      const versions = q(
        "SELECT version, sha256, created_at FROM hook_versions WHERE tenant_id = ? AND name = ? ORDER BY version",
      ).all(tenantId, name).map((r) => {
        const v = r as Row;
        return {
          version: Number(v.version),
          sha256: v.sha256 as string,
          created_at: v.created_at as string,
        };
      });
      return Promise.resolve({ ...row, versions } satisfies HookDetail);
    },
    setEnabled(tenantId, name, enabled) {
      return Promise.resolve(tx(() => {
        const r = q("UPDATE hooks SET enabled = ? WHERE tenant_id = ? AND name = ?")
          .run(enabled ? 1 : 0, tenantId, name);
        if (Number(r.changes) === 0) return null;
        bump();
        return one(tenantId, name);
      }));
    },
    rollback(tenantId, name, version): Promise<RollbackResult> {
      return Promise.resolve(tx(() => {
        if (!one(tenantId, name)) return "no-hook";
        const exists = q(
          "SELECT 1 FROM hook_versions WHERE tenant_id = ? AND name = ? AND version = ?",
        )
          .get(tenantId, name, version);
        if (!exists) return "no-version";
        q("UPDATE hooks SET active_version = ? WHERE tenant_id = ? AND name = ?")
          .run(version, tenantId, name);
        bump();
        return "ok";
      }));
    },
    deleteHook(tenantId, name) {
      return Promise.resolve(tx(() => {
        const r = q("DELETE FROM hooks WHERE tenant_id = ? AND name = ?").run(tenantId, name);
        if (Number(r.changes) === 0) return false;
        q("DELETE FROM hook_versions WHERE tenant_id = ? AND name = ?").run(tenantId, name);
        q("DELETE FROM shadows WHERE tenant_id = ? AND name = ?").run(tenantId, name);
        q("DELETE FROM shadow_runs WHERE tenant_id = ? AND name = ?").run(tenantId, name);
        bump();
        return true;
      }));
    },
    hooksGeneration() {
      const r = q("SELECT value FROM meta WHERE key = 'hooks_generation'").get() as Row;
      return Promise.resolve(Number(r.value));
    },
  };
}
