/**
 * The embedded store: SQLite through `node:sqlite` (built into Deno), in WAL
 * mode. No set-up; the default file is `$XDG_DATA_HOME/hookbox/hookbox.db`.
 * Several processes may share the file (SQLite serialises writers); the
 * PostgreSQL store is the one for several hosts.
 *
 * @module
 */
import {
  BLOB_PARTS_STORED_INDEX,
  BLOBS_STORED_INDEX,
  CAPTURES_TENANT_INDEX,
  HOOK_VERSIONS_HEAD_INDEX,
  HOOK_VERSIONS_ITEM_INDEX,
  SHADOW_RUNS_HOOK_INDEX,
} from "../store/migrations.ts";
import { statSync } from "node:fs";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import type { Manifest } from "../core/schema/manifest.ts";
import type { HookRow, Store, TenantPolicy, TenantRow } from "../store/store.ts";
import { guarded } from "../store/guard.ts";
import { hookFromRow, type Row } from "../store/rows.ts";
import type { SqliteContext } from "./_sqlite_context.ts";
import { tenantMethods } from "./_sqlite_tenants.ts";
import { hookMethods } from "./_sqlite_hooks.ts";
import { auditMethods } from "./_sqlite_audit.ts";
import { quotaMethods } from "./_sqlite_quotas.ts";
import { replayMethods } from "./_sqlite_replay.ts";

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
  BLOBS_STORED_INDEX,
  HOOK_VERSIONS_HEAD_INDEX,
  `CREATE TABLE captures (
     seq INTEGER PRIMARY KEY AUTOINCREMENT, tenant_id TEXT NOT NULL,
     decision_id TEXT NOT NULL UNIQUE, at TEXT NOT NULL, event_type TEXT NOT NULL,
     event TEXT NOT NULL);
   CREATE TABLE shadows (
     tenant_id TEXT NOT NULL, name TEXT NOT NULL, version INTEGER NOT NULL,
     started_at TEXT NOT NULL, runs INTEGER NOT NULL DEFAULT 0, agreed INTEGER NOT NULL DEFAULT 0,
     kept INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (tenant_id, name));
   CREATE TABLE shadow_runs (
     seq INTEGER PRIMARY KEY AUTOINCREMENT, tenant_id TEXT NOT NULL, name TEXT NOT NULL,
     version INTEGER NOT NULL, decision_id TEXT NOT NULL, at TEXT NOT NULL,
     agreed INTEGER NOT NULL, differs TEXT);`,
  CAPTURES_TENANT_INDEX,
  SHADOW_RUNS_HOOK_INDEX,
  `ALTER TABLE blobs ADD COLUMN parts INTEGER NOT NULL DEFAULT 0;
   CREATE TABLE blob_parts (
     sha256 TEXT NOT NULL, part INTEGER NOT NULL, stored_at INTEGER NOT NULL,
     bytes BLOB NOT NULL, PRIMARY KEY (sha256, part));`,
  BLOB_PARTS_STORED_INDEX,
  `ALTER TABLE hook_versions ADD COLUMN triggers TEXT NOT NULL DEFAULT '[]';
   ALTER TABLE hook_versions ADD COLUMN priority INTEGER NOT NULL DEFAULT 100;
   UPDATE hook_versions SET triggers = json_extract(manifest, '$.trigger'),
     priority = json_extract(manifest, '$.priority');`,
  HOOK_VERSIONS_ITEM_INDEX,
];

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
  /**
   * Told each time the checkpointer thread has copied a long log through,
   * after which the serving connection copies the few frames since, so that
   * its next commit restarts the log (tests).
   */
  onLogCopied?: () => void;
  /** Told where each long read ran: on the checkpointer thread, or on the caller's (tests). */
  onRead?: (where: "thread" | "here") => void;
  /**
   * Starts the checkpointer thread. A host that can run out of file
   * descriptors passes one that refuses the start (`host-deno`'s
   * `startModuleWorker`): checkpoints then stay on the serving connection and
   * the next commit tries again, instead of the process ending.
   * @default `new Worker(url, { type: "module" })`
   */
  startWorker?: (url: URL) => Worker;
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
    options.onLogCopied,
    options.startWorker,
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

  const context: SqliteContext = {
    q,
    tx,
    bump: () => void bump(),
    readRows,
    hookRow,
    HOOK_SELECT,
    tenantRow,
    one,
    checkpoints,
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

    ...tenantMethods(context),
    ...hookMethods(context),
    ...auditMethods(context),
    ...quotaMethods(context),
    ...replayMethods(context),
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
  toldCopied: () => void = () => {},
  startWorker: (url: URL) => Worker = (url) => new Worker(url, { type: "module" }),
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
  let nextCatchUp = 0;
  const catchUps = new Map<number, () => void>();
  const failReads = (why: string) => {
    for (const { reject } of reads.values()) reject(new Error(why));
    reads.clear();
    for (const resolve of catchUps.values()) resolve();
    catchUps.clear();
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
    /** See {@linkcode Checkpoints.caughtUp}. */
    caughtUp(): Promise<void> {
      if (!ready || failed || closed || worker === null) return Promise.resolve();
      const id = nextCatchUp++;
      const thread = worker;
      return new Promise<void>((resolve) => {
        catchUps.set(id, resolve);
        thread.postMessage({ checkpoint: id });
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
      try {
        worker = startWorker(module);
      } catch {
        // No thread to be had now (the process out of file descriptors): checkpoints stay on
        // this connection, and the next commit tries again.
        return;
      }
      worker.onmessage = (e) => {
        const data = e.data;
        if (typeof data === "object" && data !== null && "checkpointed" in data) {
          catchUps.get(data.checkpointed)?.();
          catchUps.delete(data.checkpointed);
          return;
        }
        if (typeof data === "object" && data !== null && "read" in data) {
          const pending = reads.get(data.read);
          reads.delete(data.read);
          if (data.error !== undefined) pending?.reject(new Error(data.error));
          else pending?.resolve(data.rows);
          return;
        }
        if (data === "copied") {
          copied = true;
          toldCopied();
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
  "listKeys",
  "tenantForKey",
  "putBlob",
  "getBlob",
  "sweepBlobs",
  "storedBytes",
  "listHooks",
  "listHookHeads",
  "listHookItems",
  "activeHook",
  "getVersion",
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
  // Captured events and shadow runs name no tenant, key or hook version (setShadow does).
  "readCaptures",
  "pruneCaptures",
  "listShadows",
  "appendShadowRuns",
  "readShadow",
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
