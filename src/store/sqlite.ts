/**
 * The embedded store: SQLite through `node:sqlite` (built into Deno), in WAL
 * mode. No set-up; the default file is `$XDG_DATA_HOME/hookbox/hookbox.db`.
 * Several processes may share the file (SQLite serialises writers); the
 * PostgreSQL store is the one for several hosts.
 *
 * @module
 */
import { statSync } from "node:fs";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import type { Manifest } from "../schema/manifest.ts";
import type {
  AuditPage,
  AuditQuery,
  AuditRow,
  HookDetail,
  HookRow,
  KeyRow,
  NewHookVersion,
  RollbackResult,
  Store,
  TenantPolicy,
  TenantRow,
} from "../server/store.ts";
import { capsRefusal } from "../server/store.ts";
import { decodeCursor } from "./_cursor.ts";
import { guarded } from "./_guard.ts";
import { auditPage, headFields, hookFromRow, pageBySize, type Row, scanBound } from "./_rows.ts";

/** Versioned schema migrations; each runs once, in order, in a transaction. */
const MIGRATIONS: string[] = [
  `CREATE TABLE tenants (
     id TEXT PRIMARY KEY, policy TEXT NOT NULL, created_at TEXT NOT NULL);
   CREATE TABLE api_keys (
     id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
     name TEXT, hash TEXT NOT NULL UNIQUE, created_at TEXT NOT NULL, revoked_at TEXT);
   CREATE TABLE blobs (sha256 TEXT PRIMARY KEY, bytes BLOB NOT NULL);
   CREATE TABLE hooks (
     tenant_id TEXT NOT NULL, name TEXT NOT NULL, active_version INTEGER NOT NULL,
     enabled INTEGER NOT NULL, PRIMARY KEY (tenant_id, name));
   CREATE TABLE hook_versions (
     tenant_id TEXT NOT NULL, name TEXT NOT NULL, version INTEGER NOT NULL,
     sha256 TEXT NOT NULL, runtime TEXT NOT NULL, size_bytes INTEGER NOT NULL,
     manifest TEXT NOT NULL, body TEXT NOT NULL, built_from TEXT NOT NULL,
     created_at TEXT NOT NULL, PRIMARY KEY (tenant_id, name, version));
   CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
   INSERT INTO meta VALUES ('hooks_generation', 0);
   CREATE TABLE audit (
     seq INTEGER PRIMARY KEY AUTOINCREMENT, decision_id TEXT NOT NULL UNIQUE,
     tenant_id TEXT NOT NULL, at TEXT NOT NULL, session_id TEXT NOT NULL,
     event_type TEXT NOT NULL, decision TEXT NOT NULL, reason TEXT, blocked_by TEXT,
     dry_run INTEGER NOT NULL, hooks TEXT NOT NULL);
   CREATE INDEX audit_tenant ON audit (tenant_id, seq);
   CREATE TABLE usage (
     tenant_id TEXT NOT NULL, window_start INTEGER NOT NULL, events INTEGER NOT NULL,
     fuel INTEGER NOT NULL, PRIMARY KEY (tenant_id, window_start));`,
  `ALTER TABLE hook_versions ADD COLUMN sources TEXT NOT NULL DEFAULT '{}';`,
  `CREATE TABLE leases (
     tenant_id TEXT NOT NULL, lease_id TEXT NOT NULL, expires_at INTEGER NOT NULL,
     PRIMARY KEY (tenant_id, lease_id));`,
  `ALTER TABLE hook_versions ADD COLUMN stored_bytes INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE blobs ADD COLUMN stored_at INTEGER NOT NULL DEFAULT 0;`,
  // The sweep finds its candidates here: `stored_at` sits after the bytes in
  // a blob's row, and reading it from the table walks every plugin's pages.
  `CREATE INDEX blobs_stored ON blobs (stored_at, sha256);`,
  // Heads of hook versions without reading their manifests and bodies (which
  // sit before `created_at` in the row): after an upload anywhere, each
  // tenant's hook list is read again, and only changed versions in full.
  `CREATE INDEX hook_versions_head ON hook_versions (tenant_id, name, version, sha256, created_at);`,
];

/** Audit rows one step of the retention looks at. */
const PRUNE_WINDOW = 1000;
/** Blobs one step of the sweep deletes. */
const SWEEP_STEP = 16;

/**
 * Resolves in a later turn of the event loop, after the I/O that is waiting:
 * the steps of a long delete let requests in between (a timer does; in Deno
 * 2.9 `setImmediate` did not).
 */
const nextTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** Options of {@link openSqliteStore}. */
export interface SqliteStoreOptions {
  /**
   * How often the checkpointer thread copies the log into the database file;
   * 0 leaves checkpoints to SQLite's automatic ones on this connection.
   * @default 250
   */
  checkpointMs?: number;
  /**
   * The checkpointer thread's module (tests give one that fails).
   * @default `_sqlite_checkpointer.ts`
   */
  checkpointer?: URL;
  /**
   * The log's size past which the checkpointer thread counts as fallen behind
   * (starved of CPU, or a stream of commits it cannot keep up with): the
   * serving connection checkpoints itself again until the log has restarted.
   * After a restart the log file is cut back to this size.
   * @default 32 MiB
   */
  logLimitBytes?: number;
  /**
   * Told when the checkpointer thread is ready, has failed (checkpoints are
   * back here for good), has fallen behind (back here until the log
   * restarts) or has caught up again (tests).
   */
  onCheckpointer?: (state: "ready" | "failed" | "behind" | "caught up") => void;
  /** Told where each long read ran: on the checkpointer thread, or on the caller's (tests). */
  onRead?: (where: "thread" | "here") => void;
}

/** Opens (creating if needed) the SQLite store at `path` (`:memory:` for tests). */
export function openSqliteStore(path: string, options: SqliteStoreOptions = {}): Store {
  const db = new DatabaseSync(path);
  db.exec("PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;");
  const logLimit = options.logLimitBytes ?? LOG_LIMIT_BYTES;
  db.exec(`PRAGMA synchronous = NORMAL; PRAGMA journal_size_limit = ${logLimit};`);
  const checkpointMs = options.checkpointMs ?? 250;
  const checkpoints = path === ":memory:" || checkpointMs === 0 ? null : checkpointer(
    db,
    path,
    checkpointMs,
    logLimit,
    options.checkpointer ?? new URL("./_sqlite_checkpointer.ts", import.meta.url),
    options.onCheckpointer,
  );
  const cache = new Map<string, StatementSync>();
  const q = (sql: string): StatementSync => {
    let statement = cache.get(sql);
    if (!statement) cache.set(sql, statement = db.prepare(sql));
    return statement;
  };
  const tx = <T>(fn: () => T): T => {
    db.exec("BEGIN IMMEDIATE");
    try {
      const out = fn();
      db.exec("COMMIT");
      checkpoints?.committed();
      return out;
    } catch (err) {
      db.exec("ROLLBACK");
      throw err;
    }
  };
  const bump = () => q("UPDATE meta SET value = value + 1 WHERE key = 'hooks_generation'").run();
  // Long reads (audit pages) run on the checkpointer thread's connection once
  // it is up, off the thread that answers requests; here until then, or if it fails.
  const readRows = async (sql: string, args: (string | number)[]): Promise<Row[]> => {
    const elsewhere = checkpoints?.read(sql, args);
    if (elsewhere) {
      try {
        const rows = await elsewhere;
        options.onRead?.("thread");
        return rows;
      } catch { /* the thread failed or the store is closing: read here */ }
    }
    options.onRead?.("here");
    return db.prepare(sql).all(...args) as Row[];
  };
  const hookRow = (r: Row): HookRow =>
    hookFromRow(
      r,
      JSON.parse(r.manifest as string) as Manifest,
      r.enabled === 1,
      JSON.parse(r.sources as string),
    );
  const HOOK_SELECT = `SELECT h.tenant_id, h.name, h.enabled, v.version, v.sha256, v.runtime,
      v.size_bytes, v.manifest, v.body, v.built_from, v.sources, v.created_at
    FROM hooks h JOIN hook_versions v
      ON v.tenant_id = h.tenant_id AND v.name = h.name AND v.version = h.active_version`;
  const tenantRow = (r: Row): TenantRow => ({
    id: r.id as string,
    policy: JSON.parse(r.policy as string) as TenantPolicy,
    created_at: r.created_at as string,
  });
  const one = (tenantId: string, name: string): HookRow | null => {
    const r = q(`${HOOK_SELECT} WHERE h.tenant_id = ? AND h.name = ?`).get(tenantId, name);
    return r ? hookRow(r as Row) : null;
  };

  const dataVersion = () => Number((q("PRAGMA data_version").get() as Row).data_version);
  // `node:sqlite` is synchronous and throws; `guarded` makes each throw a rejection.
  return guarded(remembering(dataVersion, {
    kind: "sqlite",
    migrate() {
      db.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)");
      tx(() => {
        const done = q("SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations").get() as Row;
        for (let v = Number(done.v) + 1; v <= MIGRATIONS.length; v++) {
          db.exec(MIGRATIONS[v - 1]!);
          q("INSERT INTO schema_migrations (version) VALUES (?)").run(v);
        }
      });
      return Promise.resolve();
    },
    ping() {
      q("SELECT 1").get();
      return Promise.resolve();
    },
    async close() {
      await checkpoints?.close();
      if (db.isOpen) db.close();
    },

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
    tenantForKey(hash) {
      const r = q(
        "SELECT t.* FROM api_keys k JOIN tenants t ON t.id = k.tenant_id WHERE k.hash = ? AND k.revoked_at IS NULL",
      ).get(hash);
      return Promise.resolve(r ? tenantRow(r as Row) : null);
    },

    putBlob(sha256, bytes) {
      q(`INSERT INTO blobs (sha256, bytes, stored_at) VALUES (?, ?, ?)
         ON CONFLICT (sha256) DO UPDATE SET stored_at = excluded.stored_at`)
        .run(sha256, bytes, Date.now());
      return Promise.resolve();
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
          AND version NOT IN (SELECT active_version FROM hooks WHERE tenant_id = ? AND name = ?)`)
        .run(tenantId, name, tenantId, name, keep, tenantId, name);
      return Promise.resolve(Number(r.changes));
    },
    getBlob(sha256) {
      const r = q("SELECT bytes FROM blobs WHERE sha256 = ?").get(sha256) as Row | undefined;
      return Promise.resolve(r ? new Uint8Array(r.bytes as Uint8Array) : null);
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
        const max = q(
          "SELECT COALESCE(MAX(version), 0) AS v FROM hook_versions WHERE tenant_id = ? AND name = ?",
        ).get(tenantId, name) as Row;
        const version = Number(max.v) + 1;
        q(`INSERT INTO hook_versions (tenant_id, name, version, sha256, runtime, size_bytes,
             manifest, body, built_from, sources, created_at, stored_bytes)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
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
        );
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
    listHookItems(tenantId) {
      const rows = q(`SELECT h.tenant_id, h.name, h.enabled, v.version, v.sha256, v.manifest
        FROM hooks h JOIN hook_versions v
          ON v.tenant_id = h.tenant_id AND v.name = h.name AND v.version = h.active_version
        WHERE h.tenant_id = ? ORDER BY h.name`).all(tenantId) as Row[];
      return Promise.resolve(rows.map((r) => ({
        ...headFields(r, r.enabled === 1),
        manifest: JSON.parse(r.manifest as string) as Manifest,
      })));
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
        bump();
        return true;
      }));
    },
    hooksGeneration() {
      const r = q("SELECT value FROM meta WHERE key = 'hooks_generation'").get() as Row;
      return Promise.resolve(Number(r.value));
    },

    appendAudit(rows: AuditRow[]) {
      if (rows.length === 0) return Promise.resolve([]);
      checkpoints?.start();
      const gone: string[] = [];
      tx(() => {
        const insert = q(`INSERT INTO audit (decision_id, tenant_id, at, session_id, event_type,
          decision, reason, blocked_by, dry_run, hooks) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
          ON CONFLICT (decision_id) DO NOTHING`);
        const born = new Map<string, string | null>();
        const createdAt = (id: string) => {
          if (!born.has(id)) {
            const r = q("SELECT created_at FROM tenants WHERE id = ?").get(id) as Row | undefined;
            born.set(id, r ? String(r.created_at) : null);
          }
          return born.get(id);
        };
        for (const a of rows) {
          if (a.tenant_created_at !== undefined && createdAt(a.tenant_id) !== a.tenant_created_at) {
            gone.push(a.decision_id);
            continue;
          }
          insert.run(
            a.decision_id,
            a.tenant_id,
            a.at,
            a.session_id,
            a.event_type,
            a.decision,
            a.reason,
            a.blocked_by,
            a.dry_run ? 1 : 0,
            JSON.stringify(a.hooks),
          );
        }
      });
      return Promise.resolve(gone);
    },
    async readAudit(query: AuditQuery): Promise<AuditPage> {
      // The rows a page looks at: the tenant's, below the cursor, newest first
      // (its index), at most `scan` of them when a filter is given.
      const below = query.cursor === undefined ? null : decodeCursor(query.cursor);
      const windowSql = `SELECT * FROM audit WHERE tenant_id = ?${
        below === null ? "" : " AND seq < ?"
      } ORDER BY seq DESC`;
      const windowArgs: (string | number)[] = below === null
        ? [query.tenant_id]
        : [query.tenant_id, below];
      const where: string[] = [];
      const args: (string | number)[] = [];
      const add = (sql: string, value: string | number | undefined) => {
        if (value === undefined) return;
        where.push(sql);
        args.push(value);
      };
      add("session_id = ?", query.session_id);
      add("event_type = ?", query.event_type);
      add("decision = ?", query.decision);
      add("at >= ?", query.since);
      if (query.hook !== undefined || query.outcome !== undefined) {
        const conds = ["1 = 1"];
        if (query.hook !== undefined) {
          conds.push("json_extract(h.value, '$.name') = ?");
          args.push(query.hook);
        }
        if (query.outcome !== undefined) {
          conds.push("json_extract(h.value, '$.outcome') = ?");
          args.push(query.outcome);
        }
        where.push(`EXISTS (SELECT 1 FROM json_each(w.hooks) h WHERE ${conds.join(" AND ")})`);
      }
      const decode = (r: Row) => ({
        hooks: JSON.parse(r.hooks as string),
        dryRun: r.dry_run === 1,
      });
      const scan = where.length > 0 ? scanBound(query.scan) : null;
      const bytes = scanBound(query.bytes);
      const candidates = `FROM (${windowSql}${scan === null ? "" : ` LIMIT ${scan}`}) AS w${
        where.length === 0 ? "" : ` WHERE ${where.join(" AND ")}`
      } ORDER BY seq DESC LIMIT ?`;
      const candidateArgs = [...windowArgs, ...args, query.limit + 1];
      let rows: Row[];
      let more: boolean;
      // Rows of the page deleted between the two reads (retention) leave no last row to go on
      // from: the page then ends at the last row that fitted.
      let gone: number | null = null;
      if (bytes === null) {
        rows = await readRows(`SELECT * ${candidates}`, candidateArgs);
        more = rows.length > query.limit;
      } else {
        // Sizes first (octet_length reads record headers, not the text), then
        // only the rows that fit.
        const sized = await readRows(
          `SELECT seq, octet_length(hooks) + COALESCE(octet_length(reason), 0) +
             octet_length(session_id) AS size ${candidates}`,
          candidateArgs,
        );
        const fit = pageBySize(sized, query.limit, bytes);
        more = fit.more;
        rows = fit.seqs.length === 0 ? [] : await readRows(
          `SELECT * FROM audit WHERE tenant_id = ? AND seq IN (${
            fit.seqs.map(() => "?").join(", ")
          }) ORDER BY seq DESC`,
          [query.tenant_id, ...fit.seqs],
        );
        if (rows.length === 0 && fit.seqs.length > 0) [more, gone] = [false, fit.seqs.at(-1)!];
      }
      let scannedTo: number | null = gone;
      if (scannedTo === null && scan !== null && !more) {
        // Stopped at the bound with rows left below it: the next page goes on from there.
        const [seen] = await readRows(
          `SELECT COUNT(*) AS n, MIN(seq) AS oldest FROM (SELECT seq FROM audit WHERE tenant_id = ?${
            below === null ? "" : " AND seq < ?"
          } ORDER BY seq DESC LIMIT ${scan})`,
          windowArgs,
        );
        if (Number(seen!.n) === scan) scannedTo = Number(seen!.oldest);
      }
      return auditPage(rows, query.limit, decode, scannedTo, more);
    },
    async pruneAudit(tenantId, before) {
      // Oldest first, a window of rows at a time with a turn of the loop in
      // between, so retention never holds the request thread (one DELETE of a
      // tenant's expired rows scanned all its rows at once); it stops at the
      // first window with nothing past retention (rows are kept in time order,
      // ingested ones nearly so).
      let removed = 0;
      let after = 0;
      for (;;) {
        const window = q(
          `SELECT COUNT(*) AS n, MAX(seq) AS last FROM (SELECT seq FROM audit
             WHERE tenant_id = ? AND seq > ? ORDER BY seq LIMIT ${PRUNE_WINDOW})`,
        ).get(tenantId, after) as Row;
        if (Number(window.n) === 0) return removed;
        const r = q("DELETE FROM audit WHERE tenant_id = ? AND seq > ? AND seq <= ? AND at < ?")
          .run(tenantId, after, Number(window.last), before);
        removed += Number(r.changes);
        if (Number(r.changes) === 0) return removed;
        after = Number(window.last);
        await nextTurn();
      }
    },
    countAudit(tenantId) {
      const r = q("SELECT COUNT(*) AS n FROM audit WHERE tenant_id = ?").get(tenantId) as Row;
      return Promise.resolve(Number(r.n));
    },

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
  }));
}

/** Default {@link SqliteStoreOptions.logLimitBytes}. */
const LOG_LIMIT_BYTES = 32 * 1024 * 1024;

/** Longest wait for the checkpointer's last checkpoint at close. */
const CHECKPOINTER_CLOSE_MS = 2_000;

/**
 * Moves WAL checkpoints off the serving connection (see
 * `_sqlite_checkpointer.ts`): a commit that crosses SQLite's automatic
 * threshold would otherwise write and fsync the log back into the file on
 * the event-loop thread, several milliseconds during which no request moves.
 * Started by the first audit write (the store's steady stream of commits);
 * until the thread is up, and if it ever fails, the connection's automatic
 * checkpoints stay on, so the log never grows without bound. Nor does it
 * while the thread is up but behind: a log past `logLimit` bytes turns them
 * back on until the log restarts (and is cut back to `logLimit`).
 */
function checkpointer(
  db: DatabaseSync,
  path: string,
  intervalMs: number,
  logLimit: number,
  module: URL,
  told: (state: "ready" | "failed" | "behind" | "caught up") => void = () => {},
) {
  let worker: Worker | null = null;
  let closed = false;
  let failed = false;
  let ready = false;
  let behind = false;
  let copied = false;
  const logSize = () => {
    try {
      return statSync(`${path}-wal`).size;
    } catch {
      return 0;
    }
  };
  let nextRead = 0;
  const reads = new Map<number, { resolve: (rows: Row[]) => void; reject: (e: Error) => void }>();
  const failReads = (why: string) => {
    for (const { reject } of reads.values()) reject(new Error(why));
    reads.clear();
  };
  const automatic = (on: boolean) => {
    if (!closed) db.exec(`PRAGMA wal_autocheckpoint = ${on ? 1000 : 0}`);
  };
  return {
    /**
     * Runs a read-only query on the thread's connection; null while the
     * thread is not up (the caller reads on its own connection instead).
     */
    read(sql: string, args: (string | number)[]): Promise<Row[]> | null {
      if (!ready || failed || closed || worker === null) return null;
      const read = nextRead++;
      const thread = worker;
      return new Promise<Row[]>((resolve, reject) => {
        reads.set(read, { resolve, reject });
        thread.postMessage({ read, sql, args });
      });
    },
    /**
     * After each commit while the thread has the checkpoints: the log file
     * only outgrows `logLimit` when it has not restarted since (a restart
     * cuts it back), so its size says whether the thread keeps up (a stat,
     * microseconds).
     */
    committed() {
      if (!ready || failed || closed) return;
      try {
        if (copied) {
          // The thread copied the log through during a commit: copy the few
          // frames since here, between two commits, so the next one restarts it.
          copied = false;
          db.exec("PRAGMA wal_checkpoint(PASSIVE)");
        }
        const over = logSize() > logLimit;
        if (over === behind) return;
        behind = over;
        automatic(over);
        told(over ? "behind" : "caught up");
      } catch {
        // The commit stands; the next one looks again.
      }
    },
    start() {
      if (worker !== null || closed) return;
      worker = new Worker(module, {
        type: "module",
      });
      worker.onmessage = (e) => {
        const data = e.data;
        if (typeof data === "object" && data !== null && "read" in data) {
          const pending = reads.get(data.read);
          reads.delete(data.read);
          if (data.error !== undefined) pending?.reject(new Error(data.error));
          else pending?.resolve(data.rows);
          return;
        }
        if (data === "copied") {
          copied = true;
          return;
        }
        if (data !== "ready") return;
        automatic(false);
        ready = true;
        told("ready");
      };
      worker.onerror = (e) => {
        e.preventDefault();
        automatic(true);
        failed = true;
        failReads("the reader thread failed");
        worker?.terminate();
        told("failed");
      };
      worker.postMessage({ path, intervalMs });
    },
    async close() {
      closed = true;
      failReads("the store is closed");
      const thread = worker;
      if (thread === null || failed) return;
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        new Promise<void>((resolve) => {
          thread.onmessage = (e) => e.data === "closed" && resolve();
          thread.onerror = (e) => {
            e.preventDefault();
            resolve();
          };
        }),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, CHECKPOINTER_CLOSE_MS);
          thread.postMessage("close");
        }),
      ]);
      clearTimeout(timer);
      thread.terminate();
    },
  };
}

/** Methods that never change what `tenantForKey` or `hooksGeneration` read. */
const CATALOG_NEUTRAL: ReadonlySet<string> = new Set([
  "ping",
  "getTenant",
  "listTenants",
  "findKey",
  "liveKeyHashes",
  "tenantForKey",
  "putBlob",
  "getBlob",
  "sweepBlobs",
  "storedBytes",
  "listHooks",
  "listHookHeads",
  "listHookItems",
  "activeHook",
  "getHook",
  "hooksGeneration",
  "appendAudit",
  "readAudit",
  "pruneAudit",
  "countAudit",
  "acquireLease",
  "releaseLease",
  "renewLeases",
  "addUsage",
  "pruneUsage",
]);
/** Keys remembered (found or not) before the oldest is forgotten. */
const REMEMBERED_KEYS = 4096;

/**
 * Every request reads its key's tenant and the hooks generation. Both are
 * remembered while nothing can have changed them: no other connection has
 * committed since (SQLite's `PRAGMA data_version`, one cheap statement
 * instead of a join; reads made together, as a request's key and generation
 * are, share it) and this connection has made no write but audit and quota
 * rows (any other method forgets them). A key revoked or a hook uploaded by
 * another process on the same file is seen on the next request.
 */
function remembering(dataVersion: () => number, store: Store): Store {
  let version = NaN;
  // Bumped whenever what is remembered may be stale: a read that started
  // before it is not remembered.
  let epoch = 0;
  const tenants = new Map<string, TenantRow | null>();
  let generation: number | null = null;
  const forget = () => {
    epoch++;
    tenants.clear();
    generation = null;
  };
  // A check stands until the microtasks queued so far have run: reads in
  // the same run of the loop share it, and nothing that arrives later (a
  // request, a reply) can be answered from it.
  let checked = false;
  const expire = () => {
    checked = false;
  };
  const check = () => {
    if (checked) return;
    checked = true;
    queueMicrotask(expire);
    const now = dataVersion();
    if (now !== version) {
      forget();
      version = now;
    }
  };
  const out: Record<string, unknown> = { kind: store.kind };
  for (const [name, fn] of Object.entries(store)) {
    if (typeof fn !== "function") continue;
    out[name] = CATALOG_NEUTRAL.has(name) ? fn.bind(store) : (...args: unknown[]) => {
      forget();
      let result: unknown;
      try {
        result = fn.apply(store, args);
      } finally {
        forget();
      }
      // A method that writes after an await (deleteTenant) forgets again once it is done:
      // a key read in between must not be remembered past the write.
      return result instanceof Promise ? result.finally(forget) : result;
    };
  }
  out.tenantForKey = async (hash: string): Promise<TenantRow | null> => {
    check();
    if (tenants.has(hash)) return tenants.get(hash)!;
    const seen = epoch;
    const row = await store.tenantForKey(hash);
    if (row !== null) Object.freeze(row.policy);
    if (seen === epoch) {
      if (tenants.size >= REMEMBERED_KEYS) tenants.delete(tenants.keys().next().value!);
      tenants.set(hash, row === null ? null : Object.freeze(row));
    }
    return row;
  };
  out.hooksGeneration = async (): Promise<number> => {
    check();
    if (generation !== null) return generation;
    const seen = epoch;
    const now = await store.hooksGeneration();
    if (seen === epoch) generation = now;
    return now;
  };
  return out as unknown as Store;
}
