/**
 * The multi-tenant hook service (SPEC §6) as one Hono app. It takes its store,
 * engine, hook builder and clock as parameters and touches no `Deno.*` API,
 * so the same app runs wherever Hono does.
 *
 * @example
 * ```ts ignore
 * const app = createApp({ store, engine, builder, adminKeyHash: await hashKey(adminKey) });
 * Deno.serve({ port: 8787 }, app.fetch);
 * ```
 *
 * @module
 */
import { type Context, Hono } from "hono";
import { StopCounts } from "./stop_counts.ts";
import { ClientErrorLines } from "./log_lines.ts";
import { AuditWriter } from "./audit.ts";
import { DEFAULT_STORAGE_LIMITS, type StorageLimits } from "./storage.ts";
export { DEFAULT_STORAGE_LIMITS, type StorageLimits } from "./storage.ts";
import { bearer, hashKey, newId, sameDigest } from "./auth.ts";
import type { HookBuilder } from "./builder.ts";
import type { Engine } from "./engine.ts";
import { ApiError, apiErrorOf, forbidden, unauthenticated } from "./errors.ts";
import { NO_METRICS, type ServiceMetrics } from "./service_metrics.ts";
import { Quotas } from "./quota.ts";
import { BODY_DEADLINES, BODY_HOLDS, MAX_UPLOAD_BYTES } from "./request.ts";
import { HeldBytes } from "./held_bytes.ts";
import { UploadGate, type UploadLimits } from "./upload_gate.ts";
import { LATE, within } from "./within.ts";
import { type Store, StoreUnavailable, type TenantRow } from "../store/store.ts";
import type { ServiceContext } from "./routes/context.ts";
import { type Caller, type Gate, mount, type Route } from "./routes/route.ts";
import { platformRoutes } from "./routes/platform.ts";
import { tenantRoutes } from "./routes/tenants.ts";
import { hookRoutes } from "./routes/hooks.ts";
import { AGENT_ANSWER_MS, AGENT_EVENT_MS, eventRoutes, keyCheckMs } from "./routes/events.ts";
import { auditRoutes } from "./routes/audit.ts";
import { replayRoutes } from "./routes/replay.ts";
import { CAPTURE_RETENTION_DAYS, ShadowRunner } from "./replay.ts";
import type { EventCodec } from "./event_body.ts";
export { DEFAULT_UPLOAD_LIMITS, type UploadLimits } from "./upload_gate.ts";
export { MAX_UNPACKED_BYTES } from "./archive.ts";
export { BODY_READ_MS, MAX_INGEST_BODY, MAX_SMALL_BODY, MAX_UPLOAD_BYTES } from "./request.ts";
export { AUDIT_PAGE_BYTES, AUDIT_SCAN_ROWS } from "./audit_limits.ts";
export { AUDIT_REASON_CHARS } from "./routes/events.ts";

/** Quota usage kept after its minute by {@linkcode Service.pruneUsage}. */
const USAGE_KEPT_MS = 3_600_000;
/**
 * After an answer that did not read its request's body (refused before it:
 * `401`, `404`, `429`, a declared length over the cap): a body of a declared
 * length up to the largest any route takes ({@linkcode MAX_UPLOAD_BYTES}) is
 * left to the Deno server, which reads it in bulk to its declared end, so its
 * sender gets the answer and the connection serves the next request; any
 * other (chunked, or declared bigger) is left unread.
 * Left alone, the Deno server would read a chunked body to its end on the thread
 * that answers every tenant, a chunk at a time, for as long as its sender
 * goes on (one unauthenticated connection trickling one-byte chunks cost it
 * ~1 s per 240,000); started and left, it is not read on: its sender meets
 * back-pressure, and the connection serves nothing more.
 */
function leaveUnread(c: Context): void {
  const raw = c.req.raw;
  if (raw.body === null || raw.bodyUsed || raw.body.locked) return;
  const length = raw.headers.get("content-length");
  if (
    length !== null && /^\d{1,15}$/.test(length) && Number(length) <= MAX_UPLOAD_BYTES &&
    !raw.headers.has("transfer-encoding")
  ) {
    return; // the Deno server reads it on in bulk, bounded by its length.
  }
  // Started and left (the Deno server then closes the connection after the answer).
  const reader = raw.body.getReader();
  reader.read().then(() => reader.releaseLock(), () => {});
}

/** Blobs no version refers to are deleted by {@linkcode Service.sweepBlobs} once this old. */
export const BLOB_GRACE_MS = 3_600_000;

/** What the app is built from. */
export interface ServerDeps {
  /** Where tenants, keys, hooks and audit live. */
  store: Store;
  /** Runs the hooks of a tenant. */
  engine: Engine;
  /** Validates and compiles uploads. */
  builder: HookBuilder;
  /** Hex SHA-256 of the admin key. */
  adminKeyHash: string;
  /** Milliseconds since the epoch. @default Date.now */
  now?: () => number;
  /** Structured log sink (one JSON object per line). @default none */
  log?: (entry: Record<string, unknown>) => void;
  /**
   * Where the app records its metrics. @default none: `GET /metrics` answers an
   * empty exposition (the Deno adapter passes Prometheus metrics)
   */
  metrics?: ServiceMetrics;
  /** The audit writer to use. @default a new one on `store` */
  audit?: AuditWriter;
  /** What one tenant may keep in the store. @default DEFAULT_STORAGE_LIMITS */
  storage?: Partial<StorageLimits>;
  /** Longest a request body may take to arrive, ms (`408 BODY_TOO_SLOW`). @default BODY_READ_MS */
  bodyReadMs?: number;
  /** Uploads under way at once, per tenant and in all. @default DEFAULT_UPLOAD_LIMITS */
  uploads?: Partial<UploadLimits>;
  /**
   * Where each committed decision also goes (a decision log, OPA-style): one
   * entry per answered event with its hooks' codes, details and stderr, and
   * the event itself when `decisionLogEvents`. @default none
   */
  decisionLog?: (entry: Record<string, unknown>) => void;
  /** Put each event in its decision-log entry. @default false */
  decisionLogEvents?: boolean;
  /**
   * Reads event bodies of at least its `minBytes` somewhere other than the
   * thread answering requests (the Deno server: a worker). @default none: in place
   */
  eventCodec?: EventCodec;
  /**
   * Bytes a tenant's requests may hold (bodies arriving, big answers unread)
   * before they are refused (`429`). @default TENANT_HELD_BYTES
   */
  tenantHeldBytes?: number;
  /**
   * The routes served, as `METHOD /path` in the OpenAPI form (`POST
   * /v1/events`); the others are not mounted (an edge Worker serves two, and
   * its router is built on its first request). @default every route
   */
  served?: ReadonlySet<string>;
  /**
   * Bytes all tenants' requests may hold before a tenant holding its even
   * share of them is refused too. @default SERVER_HELD_BYTES
   */
  serverHeldBytes?: number;
  /**
   * Wall time the hooks of an agent's event (`/v1/agents/…`) may take
   * together, ms. @default AGENT_EVENT_MS (15 s)
   */
  agentEventMs?: number;
  /**
   * Wall time an agent's call (`/v1/agents/…`) waits for its answer, ms, the
   * key check included; past it the call is the agent's block where a closed
   * guard applies, else `503 ANSWER_TOO_SLOW`. @default AGENT_ANSWER_MS (19 s)
   */
  agentAnswerMs?: number;
}

/** The service's HTTP handler (a Hono app). */
export interface ServiceApp {
  /** Answers one request: the `Deno.serve` / Workers `fetch` handler. */
  fetch(request: Request, env?: unknown, ctx?: unknown): Response | Promise<Response>;
  /** Answers a request given as a path or URL and its init (in-process callers, tests). */
  request(input: string | URL | Request, init?: RequestInit): Response | Promise<Response>;
}

/** The app plus the parts its owner shuts down. */
export interface Service {
  /** The §6 routes. */
  app: ServiceApp;
  /** The audit group-commit writer: flush it before closing the store. */
  audit: AuditWriter;
  /** The metrics the app records into. */
  metrics: ServiceMetrics;
  /**
   * Says the server is shutting down: `GET /healthz` answers `503
   * SHUTTING_DOWN` (a load balancer stops sending), and so does a request
   * whose body can no longer be read (Deno's shutdown ends body reads).
   */
  beginShutdown(): void;
  /**
   * Writes the counts of client-error request lines held back in a second
   * that has ended (`log_lines.ts`); `hookbox serve` calls it every second,
   * and the next request does it too.
   */
  flushLogLines(): void;
  /** Deletes audit rows and captured events past each tenant's retention; returns how many. */
  pruneAudit(): Promise<number>;
  /** Runs shadow versions beside live events: wait for it before closing the store. */
  shadows: ShadowRunner;
  /** Deletes quota usage of minutes that ended over an hour ago; returns how many. */
  pruneUsage(): Promise<number>;
  /**
   * Deletes stored plugins and files no hook version refers to any more
   * (deleted hooks and tenants, versions past the kept count) that were
   * stored over {@linkcode BLOB_GRACE_MS} ago; returns how many.
   */
  sweepBlobs(): Promise<number>;
}

/** Builds the service. */
export function createService(deps: ServerDeps): Service {
  const { store, engine, builder } = deps;
  const now = deps.now ?? Date.now;
  const log = deps.log ?? (() => {});
  const metrics = deps.metrics ?? NO_METRICS;
  const audit = deps.audit ?? new AuditWriter(store);
  const quotas = new Quotas(store, now);
  const stops = new StopCounts();
  const storage: StorageLimits = { ...DEFAULT_STORAGE_LIMITS, ...deps.storage };
  const uploads = new UploadGate(deps.uploads);
  const held = new HeldBytes(deps.tenantHeldBytes, deps.serverHeldBytes);
  const app = new Hono();
  const bodyReadMs = deps.bodyReadMs;
  if (bodyReadMs !== undefined) {
    app.use((c, next) => {
      BODY_DEADLINES.set(c.req.raw, bodyReadMs);
      return next();
    });
  }
  // Every request logs a time and every dispatch audits one: one string per clock millisecond.
  let isoAt = NaN;
  let isoText = "";
  const iso = () => {
    const t = now();
    if (t !== isoAt) {
      isoAt = t;
      isoText = new Date(t).toISOString();
    }
    return isoText;
  };

  // ---- request ids, logs, errors ------------------------------------------------------------
  const clientErrors = new ClientErrorLines(log, iso);
  app.use(async (c, next) => {
    const started = performance.now();
    const given = c.req.header("x-request-id");
    const id = given && /^[A-Za-z0-9._-]{1,64}$/.test(given) ? given : newId("req");
    c.header("x-request-id", id);
    await next();
    BODY_HOLDS.get(c.req.raw)?.release();
    leaveUnread(c);
    // The route as declared (a pattern, never the raw path: one series per route).
    const matched = c.req.matchedRoutes.findLast((r) => r.method !== "ALL")?.path;
    const route = matched === undefined ? "unmatched" : declaredPath(matched);
    metrics.request(c.req.method, route, c.res.status, (performance.now() - started) / 1000);
    const tenant = c.get("tenant" as never) as string | undefined;
    // A tenant's flood of refusals is counted, not written line by line (`log_lines.ts`).
    if (!clientErrors.admit(tenant ?? "", c.res.status, now())) return;
    log({
      at: iso(),
      level: c.res.status >= 500 ? "error" : "info",
      msg: "request",
      request_id: id,
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      ms: Math.round((performance.now() - started) * 100) / 100,
      ...(tenant ? { tenant } : {}),
      ...(c.get("decision_id" as never) ? { decision_id: c.get("decision_id" as never) } : {}),
      ...(c.get("error_code" as never) ? { code: c.get("error_code" as never) } : {}),
    });
  });

  let shuttingDown = false;
  const shuttingDownError = () =>
    new ApiError(503, "SHUTTING_DOWN", "the server is shutting down; retry", { retryAfter: 1 });
  app.onError((err, c) => {
    let api = err instanceof ApiError ? err : apiErrorOf(err, log);
    if (shuttingDown && api.code === "BODY_UNREADABLE") api = shuttingDownError();
    metrics.rejected(api.code);
    c.set("error_code" as never, api.code as never);
    if (api.extra.retryAfter !== undefined) c.header("retry-after", String(api.extra.retryAfter));
    return c.json(api.body(), api.status);
  });
  app.notFound((c) => c.json(new ApiError(404, "NOT_FOUND", "no such route").body(), 404));

  // ---- routes, one sub-app per resource ------------------------------------------------------
  const shadows = new ShadowRunner({ store, engine, quotas, metrics, log, iso });
  const ctx: ServiceContext = {
    shadows,
    store,
    engine,
    builder,
    quotas,
    audit,
    metrics,
    storage,
    uploads,
    held,
    stops,
    decisionLog: deps.decisionLog ?? null,
    decisionLogEvents: deps.decisionLogEvents === true,
    eventCodec: deps.eventCodec ?? null,
    agentEventMs: deps.agentEventMs ?? AGENT_EVENT_MS,
    agentAnswerMs: deps.agentAnswerMs ?? AGENT_ANSWER_MS,
    now,
    iso,
    log,
    draining: () => shuttingDown ? shuttingDownError() : null,
    routes: () => groups.flat(),
  };
  const gate = keyGate(store, deps.adminKeyHash, held, keyCheckMs(ctx.agentAnswerMs));
  const groups: Route[][] = [
    platformRoutes(ctx),
    tenantRoutes(ctx),
    hookRoutes(ctx),
    eventRoutes(ctx),
    auditRoutes(ctx),
    replayRoutes(ctx),
  ];
  const served = deps.served;
  if (served !== undefined) {
    for (const [i, routes] of groups.entries()) {
      groups[i] = routes.filter((r) => served.has(`${r.method.toUpperCase()} ${r.path}`));
    }
  }
  for (const routes of groups) app.route("/", mount(routes, gate));

  return {
    app,
    audit,
    metrics,
    shadows,
    sweepBlobs: () => store.sweepBlobs(now() - BLOB_GRACE_MS),
    pruneUsage: () => store.pruneUsage(now() - USAGE_KEPT_MS),
    beginShutdown: () => {
      shuttingDown = true;
      clientErrors.flush(now(), true);
    },
    flushLogLines: () => clientErrors.flush(now()),
    async pruneAudit() {
      let removed = 0;
      for (const tenant of await store.listTenants()) {
        const days = tenant.policy.audit_retention_days ?? 30;
        const before = new Date(now() - days * 86_400_000).toISOString();
        removed += await store.pruneAudit(tenant.id, before);
        if (store.pruneCaptures !== undefined) {
          const kept = tenant.policy.capture?.retention_days ?? CAPTURE_RETENTION_DAYS;
          const until = new Date(now() - kept * 86_400_000).toISOString();
          removed += await store.pruneCaptures(tenant.id, until);
        }
      }
      return removed;
    },
  };
}

const DECLARED = new Map<string, string>();

/** Hono's `/v1/hooks/:name` as declared, `/v1/hooks/{name}` (a few routes: kept). */
function declaredPath(path: string): string {
  let declared = DECLARED.get(path);
  if (declared === undefined) {
    declared = path.replaceAll(/:([a-z_]+)/g, "{$1}");
    DECLARED.set(path, declared);
  }
  return declared;
}

/**
 * Who a request's key names. Hashing is the costliest step, so the hashes of
 * recently seen keys are kept; the key's row is still read from the store on
 * every request, so a revoked key stops working at once. The tenant each key
 * last named is kept too, for the routes that go on when the store cannot be
 * read (`Route.lastKnown`).
 */
function keyGate(
  store: Store,
  adminKeyHash: string,
  held: HeldBytes,
  lastKnownMs: number,
): Gate {
  const hashes = new Map<string, string>();
  const named = new Map<string, TenantRow>();
  const hashOf = async (key: string): Promise<string> => {
    let hash = hashes.get(key);
    if (hash === undefined) {
      hash = await hashKey(key);
      if (hashes.size >= 1024) hashes.delete(hashes.keys().next().value!);
      hashes.set(key, hash);
    }
    return hash;
  };
  const remember = (hash: string, tenant: TenantRow | null) => {
    if (named.get(hash) === tenant) return;
    named.delete(hash);
    if (tenant === null) return;
    if (named.size >= KNOWN_KEYS) named.delete(named.keys().next().value!);
    named.set(hash, tenant);
  };
  /**
   * The tenant the key names, or null for the admin key. With
   * `withGeneration`, the hooks generation to serve is read together with the
   * key (one look at the store: SQLite checks for other connections' commits
   * once, PostgreSQL answers both in one query). With `lastKnown`, a store
   * that cannot be read, or does not answer within `lastKnownMs`, gives the
   * tenant the key last named, if any.
   */
  const who = async (
    c: Context,
    withGeneration: boolean,
    lastKnown = false,
  ): Promise<Caller | null> => {
    const key = bearer(c.req.header("authorization"));
    if (key === null) throw unauthenticated();
    const hash = await hashOf(key);
    if (sameDigest(hash, adminKeyHash)) return null;
    let tenant: TenantRow | null;
    let generation: number | null;
    try {
      const lookup = Promise.all([
        store.tenantForKey(hash),
        withGeneration ? store.hooksGeneration() : null,
      ]);
      const found = lastKnown ? await within(lookup, lastKnownMs) : await lookup;
      if (found === LATE) {
        throw new StoreUnavailable(
          `the store did not answer the key check within ${lastKnownMs} ms`,
        );
      }
      [tenant, generation] = found;
    } catch (err) {
      const known = lastKnown ? named.get(hash) : undefined;
      if (known === undefined) throw err;
      c.set("tenant" as never, known.id as never);
      return { tenant: known, generation: undefined, refused: err };
    }
    remember(hash, tenant);
    if (tenant === null) throw unauthenticated();
    c.set("tenant" as never, tenant.id as never);
    return { tenant, generation: generation ?? undefined };
  };
  return {
    async admin(c) {
      if ((await who(c, false)) !== null) throw forbidden("this route needs the admin key");
    },
    async tenant(c, withGeneration, lastKnown): Promise<Caller> {
      const w = await who(c, withGeneration, lastKnown);
      if (w === null) throw forbidden("this route needs a tenant key");
      try {
        held.check(w.tenant.id);
      } catch (err) {
        if (!lastKnown) throw err;
        return { ...w, refused: err };
      }
      BODY_HOLDS.set(c.req.raw, held.body(w.tenant.id));
      return w;
    },
  };
}

/** Keys whose tenant {@linkcode keyGate} keeps for `Route.lastKnown` routes. */
const KNOWN_KEYS = 10_000;
