/**
 * `hookbox serve` on Deno: opens the store named by `--db`, builds the
 * runtimes (plugins come from the store, never from the file system), the
 * engine, the hook builder and the Hono service, and serves it until SIGINT
 * or SIGTERM, then finishes in-flight dispatches, flushes the audit and
 * closes the store.
 *
 * @module
 */
import { HookboxError } from "../../core/errors.ts";
import { createPromptRuntime } from "../../core/runtime/prompt.ts";
import { Metrics } from "../../service/metrics.ts";
import { createWasmRuntime } from "../../runtime-wasm/mod.ts";
import { tuneWasmTiering } from "../wasm_tiering.ts";
import { createService, type Service } from "../../service/app.ts";
import { hashKey, newKey } from "../../service/auth.ts";
import { createEngine, type Engine, storedPluginSha } from "../../service/engine.ts";
import type { Store } from "../../store/store.ts";
import { openSqliteStore } from "../../store-sqlite/sqlite.ts";
import { createDenoHookBuilder } from "./hook_builder.ts";
import { sweepStaleTemp } from "../../host-deno/cache_trim.ts";
import { startModuleWorker } from "../../host-deno/worker_start.ts";
import { createEventCodec, type DenoEventCodec } from "./event_codec.ts";
import { WARM_UP_EVENTS, warmUp } from "./warm_up.ts";
import { decisionWebhook } from "./decision_webhook.ts";
import { queuedWrites, settlesWithin } from "./log_queue.ts";
import { keepServing } from "./listener.ts";

/** Options of {@linkcode startServer}. */
export interface ServeOptions {
  port?: number;
  hostname?: string;
  /** `sqlite:PATH`, `postgres://…`, or a bare path. @default the embedded default file */
  db?: string;
  /** @default HOOKBOX_ADMIN_KEY, else a generated key printed once on stderr */
  adminKey?: string;
  /**
   * A file holding the admin key, made (mode 0600, a new key) when missing.
   * Without this, `adminKey` and `HOOKBOX_ADMIN_KEY`, the embedded store keeps
   * its key in `<database>.admin-key`; a PostgreSQL store refuses to start
   * (its instances must share one key).
   */
  adminKeyFile?: string;
  /**
   * Where each committed decision goes as one JSON line (a decision log): a
   * file it is appended to, or an `http(s)://` URL it is posted to in batches
   * (`decision_webhook.ts`; `HOOKBOX_DECISION_LOG_TOKEN` is sent as a bearer token).
   */
  decisionLog?: string;
  /** Put each event in its decision-log line. @default false */
  decisionLogEvents?: boolean;
  /** Compiler cache for uploads. */
  cacheDir?: string;
  /** Log sink. @default JSON lines on stderr */
  log?: (entry: Record<string, unknown>) => void;
  /**
   * Worker threads that run plugins, shared fairly between tenants (the
   * tenant with the fewest calls running goes next); 0 runs them on the
   * event-loop thread. @default the number of cores
   */
  workers?: number;
  /**
   * Listen with `SO_REUSEPORT`, beside other processes on the same port (one
   * of `serve --processes N`; needs `--unstable-net`). @default false
   */
  reusePort?: boolean;
  /** Run the hourly upkeep (retention, blob sweep, usage prune, temp sweep) here. @default true */
  upkeep?: boolean;
  /** Which process of `serve --processes N` this is: each log line says so. */
  processIndex?: number;
  /**
   * Synthetic events the server sends through a throwaway copy of itself
   * before it listens, so the first requests find the code compiled (see
   * `warm_up.ts`); 0 starts cold. @default WARM_UP_EVENTS
   */
  warmUpEvents?: number;
  /** What one tenant's requests may hold, bytes (`createService`'s `tenantHeldBytes`). */
  tenantHeldBytes?: number;
  /** What all tenants' requests may hold, bytes (`createService`'s `serverHeldBytes`). */
  serverHeldBytes?: number;
  /**
   * How long `shutdown()` waits for requests in flight before it flushes the
   * audit, closes the store and lets the process end regardless. A client
   * that never finishes sending its body would otherwise hold the shutdown
   * forever (Deno's graceful shutdown waits for every open request).
   * @default SHUTDOWN_GRACE_MS
   */
  shutdownGraceMs?: number;
}

/** How long a shutdown waits for requests in flight by default. */
export const SHUTDOWN_GRACE_MS = 10_000;

/** A running server. */
export interface RunningServer {
  url: string;
  service: Service;
  store: Store;
  /**
   * Stops accepting, finishes in-flight requests (for at most the grace
   * period), flushes the audit, closes the store.
   */
  shutdown(): Promise<void>;
  /** Resolves once the server has stopped: on its own, or once `shutdown()` is done. */
  finished: Promise<void>;
}

/** `$XDG_DATA_HOME/hookbox/hookbox.db`, else `~/.local/share/hookbox/hookbox.db`. */
export function defaultDbPath(): string {
  const xdg = Deno.env.get("XDG_DATA_HOME");
  const home = Deno.env.get("HOME") ?? "/tmp";
  return `${xdg || `${home}/.local/share`}/hookbox/hookbox.db`;
}

/** Opens the store a `--db` value names and runs its migrations. */
export async function openStore(
  db: string | undefined,
  options: { mustExist?: boolean } = {},
): Promise<Store> {
  let store: Store;
  if (db?.startsWith("postgres://") || db?.startsWith("postgresql://")) {
    const { openPostgresStore } = await import("../../store-postgres/postgres.ts");
    store = openPostgresStore(db);
  } else {
    const path = db === undefined ? defaultDbPath() : db.replace(/^sqlite:/, "");
    if (options.mustExist && path !== ":memory:" && !(await Deno.stat(path).catch(() => null))) {
      throw new HookboxError(
        "OPTION_INVALID",
        `no store at ${path}: name the service's database with --db sqlite:PATH or postgres://…`,
      );
    }
    if (path !== ":memory:") {
      await Deno.mkdir(path.slice(0, Math.max(0, path.lastIndexOf("/"))) || ".", {
        recursive: true,
      });
    }
    store = openSqliteStore(path, { startWorker: startModuleWorker });
  }
  await store.migrate();
  return store;
}

/**
 * Runtimes whose plugins are read from the store by SHA-256 (cached in
 * memory). `lend` hands them a plugin the store does not hold (the warm-up's)
 * until the returned function is called.
 */
export function storeRuntimes(store: Store, workers = 0) {
  const blobs = new Map<string, Promise<Uint8Array>>();
  const lent = new Map<string, Uint8Array>();
  const loadBytes = (hook: Parameters<Parameters<typeof createWasmRuntime>[0]["loadBytes"]>[0]) => {
    const sha = storedPluginSha(hook);
    if (sha === null) return Promise.reject(new Error(`hook "${hook.name}" is not a stored hook`));
    const borrowed = lent.get(sha);
    if (borrowed !== undefined) return Promise.resolve(borrowed);
    let found = blobs.get(sha);
    if (!found) {
      found = store.getBlob(sha).then((b) => {
        if (b === null) throw new Error(`plugin ${sha} is missing from the store`);
        return b;
      });
      blobs.set(sha, found);
      found.catch(() => blobs.delete(sha));
      if (blobs.size > 256) blobs.delete(blobs.keys().next().value!);
    }
    return found;
  };
  const wasm = createWasmRuntime(
    workers > 0
      ? { loadBytes, worker: true, workers, startWorkers: true, startWorker: startModuleWorker }
      : { loadBytes },
  );
  const lend = (sha: string, bytes: Uint8Array) => {
    lent.set(sha, bytes);
    return () => void lent.delete(sha);
  };
  return { wasm, prompt: createPromptRuntime(), lend };
}

/** Starts the service; resolves once it accepts requests. */
export async function startServer(options: ServeOptions = {}): Promise<RunningServer> {
  const metrics = new Metrics();
  const sink = options.log ? null : stderrLines((lines) => metrics.logLinesDropped.inc(lines));
  const write = options.log ?? sink!.write;
  const log = options.processIndex === undefined
    ? write
    : (entry: Record<string, unknown>) => write({ ...entry, process: options.processIndex });
  const { key: adminKey, source: adminKeySource } = await adminKeyOf(options);
  const store = await openStore(options.db);
  await tuneWasmTiering();
  const workers = options.workers ?? navigator.hardwareConcurrency ?? 1;
  // What this process runs with, one line (never a key or a password).
  log({
    at: new Date().toISOString(),
    level: "info",
    msg: "starting",
    pid: Deno.pid,
    store: store.kind,
    db: redactedDb(options.db),
    workers,
    warm_up: options.warmUpEvents ?? WARM_UP_EVENTS,
    shutdown_grace_ms: options.shutdownGraceMs ?? SHUTDOWN_GRACE_MS,
    admin_key: adminKeySource,
  });
  const runtimes = storeRuntimes(store, workers);
  metrics.watchRuntime(() => runtimes.wasm.stats?.());
  // The codec starts below, once nothing else can fail the start; until then no event runs.
  let eventCodec: DenoEventCodec | null = null;
  const engine: Engine = createEngine({
    store,
    runtimes,
    matchApart: (tenantId, job) => eventCodec?.match(tenantId, job) ?? Promise.resolve(null),
  });
  const builder = createDenoHookBuilder(options.cacheDir ? { cacheDir: options.cacheDir } : {});
  const warmUpEvents = options.warmUpEvents ?? WARM_UP_EVENTS;
  if (warmUpEvents > 0) {
    // Before the port opens: a load balancer sends nothing to a server still warming up.
    try {
      const { events, failed, ms } = await warmUp(runtimes, builder, warmUpEvents);
      const level = failed > 0 ? "warn" : "info";
      log({ at: new Date().toISOString(), level, msg: "warm-up", events, failed, ms });
    } catch (err) {
      log({ at: new Date().toISOString(), level: "warn", msg: "warm-up", error: String(err) });
    }
    sink?.flush();
  }
  const decisionLogFailed = (err: unknown) =>
    log({ at: new Date().toISOString(), level: "error", msg: "decision log", error: String(err) });
  const decisions = options.decisionLog === undefined
    ? null
    : /^https?:\/\//.test(options.decisionLog)
    ? decisionWebhook(options.decisionLog, {
      token: Deno.env.get("HOOKBOX_DECISION_LOG_TOKEN"),
      report: decisionLogFailed,
    })
    : await jsonLinesFile(options.decisionLog, decisionLogFailed);
  eventCodec = createEventCodec({ log });
  const service = createService({
    store,
    engine,
    builder,
    eventCodec,
    adminKeyHash: await hashKey(adminKey),
    log,
    metrics,
    ...(options.tenantHeldBytes === undefined ? {} : { tenantHeldBytes: options.tenantHeldBytes }),
    ...(options.serverHeldBytes === undefined ? {} : { serverHeldBytes: options.serverHeldBytes }),
    ...(decisions === null ? {} : {
      decisionLog: decisions.write,
      decisionLogEvents: options.decisionLogEvents === true,
    }),
  });
  // Hourly upkeep: audit past each tenant's retention, stored plugins and files
  // nothing refers to any more (deleted hooks and tenants, old versions), and
  // quota usage of past minutes.
  const upkeep = (msg: string, work: () => Promise<number>) =>
    work().catch((err) =>
      log({ at: new Date().toISOString(), level: "error", msg, error: String(err) })
    );
  // What a killed server left in the temporary folder (uploads it was taking, builds).
  const tempSweep = () => sweepStaleTemp();
  if (options.upkeep !== false) upkeep("temp sweep", tempSweep);
  const retention = setInterval(() => {
    if (options.upkeep === false) return; // another process of the same server does it
    upkeep("audit retention", service.pruneAudit);
    upkeep("blob sweep", service.sweepBlobs);
    upkeep("usage prune", service.pruneUsage);
    upkeep("temp sweep", tempSweep);
  }, 3_600_000);
  Deno.unrefTimer(retention);
  // The counts of client-error lines held back (a tenant's flood of refusals), once a second.
  const logLines = setInterval(() => service.flushLogLines(), 1000);
  Deno.unrefTimer(logLines);
  let resolveReady: (url: string) => void;
  const ready = new Promise<string>((r) => resolveReady = r);
  const server = keepServing({
    port: options.port ?? 8787,
    hostname: options.hostname ?? "127.0.0.1",
    reusePort: options.reusePort === true,
    log,
    onListen: ({ hostname, port }) => {
      const url = `http://${hostname}:${port}`;
      log({ at: new Date().toISOString(), level: "info", msg: "ready", url });
      // After the ready line, through the same queue.
      if (sink) sink.flush(`listening on ${url}\n`);
      else console.error(`listening on ${url}`);
      resolveReady(url);
    },
  }, service.app.fetch);
  const url = await ready;
  const grace = options.shutdownGraceMs ?? SHUTDOWN_GRACE_MS;
  let stopping: Promise<void> | null = null;
  let stopped = () => {};
  const shutdown = () =>
    stopping ??= (async () => {
      clearInterval(retention);
      clearInterval(logLines);
      service.beginShutdown();
      log({ at: new Date().toISOString(), level: "info", msg: "draining", grace_ms: grace });
      if (!(await settlesWithin(server.shutdown(), grace))) {
        // What is still open is left to the end of the process: answers not
        // given are never audited, and the ones given already are committed.
        log({
          at: new Date().toISOString(),
          level: "warn",
          msg: "shutdown",
          error: `requests still open after ${grace} ms are cut off`,
        });
      }
      eventCodec.close();
      await service.shadows.settled();
      await engine.close();
      await service.audit.flush();
      await Promise.all([runtimes.wasm.close?.(), runtimes.prompt.close?.()]);
      await store.close();
      await decisions?.close();
      log({ at: new Date().toISOString(), level: "info", msg: "stopped" });
      sink?.flush();
      await sink?.drained();
    })().finally(() => stopped());
  return {
    url,
    service,
    store,
    shutdown,
    finished: Promise.race([server.finished, new Promise<void>((resolve) => stopped = resolve)]),
  };
}

/**
 * The admin key and where it came from: `options.adminKey`, then
 * `HOOKBOX_ADMIN_KEY`, then a key file (`adminKeyFile`, `HOOKBOX_ADMIN_KEY_FILE`,
 * else `<database>.admin-key` for the embedded store). A key file is made with
 * a new key when missing, and that key is printed once; later starts read the
 * same key. A PostgreSQL store with none of these refuses to start.
 */
export async function adminKeyOf(
  options: ServeOptions,
): Promise<{ key: string; source: string }> {
  const given = options.adminKey ?? Deno.env.get("HOOKBOX_ADMIN_KEY");
  if (given) return { key: given, source: "given" };
  const postgres = /^postgres(ql)?:\/\//.test(options.db ?? "");
  const file = options.adminKeyFile ?? Deno.env.get("HOOKBOX_ADMIN_KEY_FILE") ??
    (postgres
      ? undefined
      : `${(options.db?.replace(/^sqlite:/, "") || defaultDbPath())}.admin-key`);
  if (file === undefined || file === ":memory:.admin-key") {
    if (postgres) {
      throw new HookboxError(
        "OPTION_INVALID",
        "a PostgreSQL store is shared by instances that must share one admin key: " +
          "set HOOKBOX_ADMIN_KEY or --admin-key-file",
      );
    }
    const key = newKey();
    console.error(`hookbox: generated admin key (shown once): ${key}`);
    return { key, source: "generated" };
  }
  const text = await Deno.readTextFile(file).catch((err) => {
    if (err instanceof Deno.errors.NotFound) return null;
    throw new HookboxError("OPTION_INVALID", `admin key file ${file}: ${err.message}`);
  });
  if (text !== null) {
    const key = text.trim();
    if (key.length < 16) {
      throw new HookboxError(
        "OPTION_INVALID",
        `admin key file ${file} holds no key (16+ characters)`,
      );
    }
    return { key, source: `file ${file}` };
  }
  const key = newKey();
  await Deno.mkdir(file.slice(0, Math.max(0, file.lastIndexOf("/"))) || ".", { recursive: true });
  await Deno.writeTextFile(file, `${key}\n`, { mode: 0o600, createNew: true });
  console.error(`hookbox: generated admin key (shown once, kept in ${file}): ${key}`);
  return { key, source: `file ${file}` };
}

/**
 * JSON lines appended to `path` (made 0600 if missing), batched as the log
 * lines are ({@linkcode batchedLines}) and written from a
 * {@linkcode queuedWrites} queue: a decision costs the request thread one
 * string, not a write, and a file that is slow to take them (a named pipe
 * whose reader is behind, a slow disk) never holds that thread. Lines
 * dropped because the queue is full are reported through `failed`, once
 * until the queue has emptied again; a failed write is reported once, and
 * the lines after it are dropped.
 */
async function jsonLinesFile(
  path: string,
  failed: (err: unknown) => void,
): Promise<{ write: (entry: Record<string, unknown>) => void; close: () => Promise<void> }> {
  const file = await Deno.open(path, { append: true, create: true, mode: 0o600 });
  let reported = false;
  let behind = 0;
  const queue = queuedWrites((bytes) => file.write(bytes), (lines, why) => {
    if (queue.broken) {
      if (!reported) failed(why);
      reported = true;
    } else {
      if (behind === 0) failed(new Error(`${lines} lines dropped: ${why.message}`));
      behind += lines;
    }
  });
  const lines = batchedLines((bytes, n) => {
    if (queue.enqueue(bytes, n)) behind = 0; // room again: the next drop is reported
  }, (_lines, err) => {
    if (!reported) failed(err);
    reported = true;
  });
  return {
    write: lines.write,
    async close() {
      lines.flush();
      await queue.drained();
      file.close();
    },
  };
}

/** The store's URL for a log line: a PostgreSQL password is never printed. */
function redactedDb(db: string | undefined): string {
  if (db === undefined) return `sqlite:${defaultDbPath()}`;
  return db.replace(/^(postgres(?:ql)?:\/\/[^:@/]*):[^@/]*@/, "$1:***@");
}

/** The request log's sink: JSON lines to stderr ({@linkcode stderrLines}). */
interface StderrLines {
  write(entry: Record<string, unknown>): void;
  /** Queues what is batched, then `text` (a line outside the JSON log), in that order. */
  flush(text?: string): void;
  /** Resolves once every queued line is written, or after 2 s (`LOG_DRAIN_MS`). */
  drained(): Promise<void>;
}

/**
 * JSON log lines to stderr, batched ({@linkcode batchedLines}) and written
 * from a {@linkcode queuedWrites} queue: past its size lines are dropped and
 * counted by `dropped`. When stderr cannot be written at all (its reader
 * went away: a broken pipe) the service keeps answering and counts every
 * later line.
 */
function stderrLines(dropped: (lines: number) => void): StderrLines {
  const queue = queuedWrites((bytes) => Deno.stderr.write(bytes), (n) => dropped(n));
  const lines = batchedLines((bytes, n) => void queue.enqueue(bytes, n), (n) => dropped(n));
  return {
    write: lines.write,
    flush(text) {
      lines.flush();
      if (text !== undefined && !queue.broken) queue.enqueue(new TextEncoder().encode(text), 0);
    },
    drained: queue.drained,
  };
}

/**
 * JSON lines handed to `writeSync` in batches: one write per 50 ms or 64 KB
 * instead of one per line; `flush` writes what is pending. Once a write
 * throws, `failed` hears how many lines it held (and then of each later
 * line, which is not even formatted).
 */
function batchedLines(
  writeSync: (bytes: Uint8Array, lines: number) => void,
  failed: (lines: number, err: unknown) => void,
): { write: (entry: Record<string, unknown>) => void; flush: () => void } {
  const encoder = new TextEncoder();
  let pending: string[] = [];
  let size = 0;
  let broken: unknown = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    if (pending.length === 0) return;
    const bytes = encoder.encode(pending.join(""));
    const lines = pending.length;
    pending = [];
    size = 0;
    try {
      writeSync(bytes, lines);
    } catch (err) {
      broken = err ?? new Error("write failed");
      failed(lines, broken);
    }
  };
  return {
    write(entry) {
      if (broken !== null) return failed(1, broken);
      const line = `${JSON.stringify(entry)}\n`;
      pending.push(line);
      size += line.length;
      if (size >= 65_536) flush();
      else if (timer === undefined) {
        const t = setTimeout(flush, 50);
        Deno.unrefTimer(t as unknown as number);
        timer = t;
      }
    },
    flush,
  };
}
