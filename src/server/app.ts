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
import type { z } from "@hono/zod-openapi";
import type { DispatchResult } from "../dispatch/result.ts";
import { base64Bytes, concatBytes, sha256Hex } from "../bytes.ts";
import { unpackArchive } from "./archive.ts";
import { clipped, messageOf } from "../runtime/failure.ts";
import { isHookboxError } from "../errors.ts";
import type { ParseEventResult } from "../schema/event.ts";
import { type EventText, parseEventText } from "../schema/event_text.ts";
import { agentEventOfText } from "../agents/event_text.ts";
import {
  type AgentAnswer,
  agentAnswer,
  AGENTS,
  isAgentName,
  passThrough,
} from "../agents/adapters.ts";
import { closedGuard, mappedType, readHead, unreadableBlock } from "../agents/unreadable.ts";
import { StopCounts } from "./stop_counts.ts";
import { storable, unstorableAt } from "../schema/storable.ts";
import { AuditWriter, TenantGone } from "./audit.ts";
import { bearer, hashKey, newId, newKey, sameDigest } from "./auth.ts";
import { type HookBuilder, HookRejected } from "./builder.ts";
import type { Engine, ServedHook } from "./engine.ts";
import {
  ApiError,
  forbidden,
  hookNotFound,
  storeUnavailable,
  tenantNotFound,
  unauthenticated,
} from "./errors.ts";
import { NO_METRICS, type ServiceMetrics } from "./service_metrics.ts";
import { openApiDocument } from "./openapi.ts";
import { Quotas } from "./quota.ts";
import { UploadGate, type UploadLimits } from "./upload_gate.ts";
export { DEFAULT_UPLOAD_LIMITS, type UploadLimits } from "./upload_gate.ts";
import { serverSchemas } from "./schemas.ts";
import {
  type AuditRow,
  type HookDetail,
  type HookItem,
  type NewHookVersion,
  PLATFORM,
  type Store,
  StoreUnavailable,
  type TenantRow,
  VersionRefused,
} from "./store.ts";

/** Largest hook upload (JSON or gzip'd tar), bytes. */
export const MAX_UPLOAD_BYTES = 16 * 1024 * 1024;
export { MAX_UNPACKED_BYTES } from "./archive.ts";
/** Largest body of the small JSON routes, bytes. */
export const MAX_SMALL_BODY = 64 * 1024;
/** Largest body of `POST /v1/audit/ingest`, bytes. */
export const MAX_INGEST_BODY = 8 * 1024 * 1024;
/** Default event body cap when the tenant policy sets no `input_kb`. */
const DEFAULT_INPUT_KB = 1024;

/**
 * What one tenant may keep in the store. Uploads are size-capped one by one;
 * these bound what many uploads add up to, so no tenant can fill the disk
 * every tenant's audit is written to.
 */
export interface StorageLimits {
  /** Hooks a tenant may have. @default 1000 */
  hooksPerTenant: number;
  /** Versions kept per hook: an upload past it deletes the oldest (never the active one). @default 20 */
  versionsPerHook: number;
  /** Bytes a tenant's kept versions may hold, plugins and uploaded files. @default 1 GiB */
  bytesPerTenant: number;
}

/** The default {@linkcode StorageLimits}. */
export const DEFAULT_STORAGE_LIMITS: Readonly<StorageLimits> = Object.freeze({
  hooksPerTenant: 1000,
  versionsPerHook: 20,
  bytesPerTenant: 1024 * 1024 * 1024,
});

/**
 * Most audit rows one filtered `GET /v1/audit` looks at. The embedded store
 * reads on the thread that answers every tenant's events, and a filter that
 * matches nothing used to scan every row the tenant had (a hook filter over
 * 300,000 rows held that thread 364 ms); a page now looks at this many rows
 * at most (about 6 ms with a hook filter) and its `next_cursor` goes on from there.
 */
export const AUDIT_SCAN_ROWS = 5000;

/**
 * Most bytes of stored text (hooks, reasons, sessions) one `GET /v1/audit`
 * page carries; past it the page ends early with a `next_cursor`. A tenant
 * with a thousand hooks writes rows of ~190 KB, and a page of a thousand of
 * those held the thread that answers every tenant's events 850 ms (186 MB
 * decoded and encoded); with this bound 27 ms.
 */
export const AUDIT_PAGE_BYTES = 4 * 1024 * 1024;

/** Quota usage kept after its minute by {@linkcode Service.pruneUsage}. */
const USAGE_KEPT_MS = 3_600_000;

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
  /** Deletes audit rows past each tenant's retention; returns how many. */
  pruneAudit(): Promise<number>;
  /** Deletes quota usage of minutes that ended over an hour ago; returns how many. */
  pruneUsage(): Promise<number>;
  /**
   * Deletes stored plugins and files no hook version refers to any more
   * (deleted hooks and tenants, versions past the kept count) that were
   * stored over {@linkcode BLOB_GRACE_MS} ago; returns how many.
   */
  sweepBlobs(): Promise<number>;
}

type Who = { kind: "admin" } | { kind: "tenant"; tenant: TenantRow; generation: number | null };

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
  app.use(async (c, next) => {
    const started = performance.now();
    const given = c.req.header("x-request-id");
    const id = given && /^[A-Za-z0-9._-]{1,64}$/.test(given) ? given : newId("req");
    c.header("x-request-id", id);
    await next();
    log({
      at: iso(),
      level: c.res.status >= 500 ? "error" : "info",
      msg: "request",
      request_id: id,
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      ms: Math.round((performance.now() - started) * 100) / 100,
      ...(c.get("tenant" as never) ? { tenant: c.get("tenant" as never) } : {}),
    });
  });

  let shuttingDown = false;
  const shuttingDownError = () =>
    new ApiError(503, "SHUTTING_DOWN", "the server is shutting down; retry", { retryAfter: 1 });
  app.onError((err, c) => {
    let api = err instanceof ApiError ? err : storeOrInternal(err, log);
    if (shuttingDown && api.code === "BODY_UNREADABLE") api = shuttingDownError();
    metrics.rejected(api.code);
    if (api.extra.retryAfter !== undefined) c.header("retry-after", String(api.extra.retryAfter));
    return c.json(api.body(), api.status);
  });
  app.notFound((c) => c.json(new ApiError(404, "NOT_FOUND", "no such route").body(), 404));

  // ---- auth --------------------------------------------------------------------------------
  // Hashes of recently seen keys (hashing is the costliest step of auth). The
  // key's row is still read from the store on every request, so a revoked key
  // stops working at once.
  const hashes = new Map<string, string>();
  const hashOf = async (key: string): Promise<string> => {
    let hash = hashes.get(key);
    if (hash === undefined) {
      hash = await hashKey(key);
      if (hashes.size >= 1024) hashes.delete(hashes.keys().next().value!);
      hashes.set(key, hash);
    }
    return hash;
  };
  /**
   * Who the request's key names. With `withGeneration`, the hooks generation
   * to serve is read together with the key (one look at the store: SQLite
   * checks for other connections' commits once, PostgreSQL answers both in
   * one query), so the hooks are those current when the request arrived.
   */
  const who = async (c: Context, withGeneration = false): Promise<Who> => {
    const key = bearer(c.req.header("authorization"));
    if (key === null) throw unauthenticated();
    const hash = await hashOf(key);
    if (sameDigest(hash, deps.adminKeyHash)) return { kind: "admin" };
    const [tenant, generation] = await Promise.all([
      store.tenantForKey(hash),
      withGeneration ? store.hooksGeneration() : null,
    ]);
    if (tenant === null) throw unauthenticated();
    c.set("tenant" as never, tenant.id as never);
    return { kind: "tenant", tenant, generation };
  };
  const admin = async (c: Context): Promise<void> => {
    if ((await who(c)).kind !== "admin") throw forbidden("this route needs the admin key");
  };
  const tenantOf = async (c: Context): Promise<TenantRow> => (await dispatcherOf(c, false)).tenant;
  const dispatcherOf = async (c: Context, withGeneration = true) => {
    const w = await who(c, withGeneration);
    if (w.kind !== "tenant") throw forbidden("this route needs a tenant key");
    return { tenant: w.tenant, generation: w.generation ?? undefined };
  };

  // ---- public ------------------------------------------------------------------------------
  app.get("/healthz", async (c) => {
    if (shuttingDown) throw shuttingDownError();
    try {
      await store.ping();
    } catch {
      throw new ApiError(503, "STORE_UNAVAILABLE", "the store cannot be reached");
    }
    return c.json({ status: "ok", store: store.kind });
  });
  // Built on first request: generating it costs start-up time nobody may need (edge Workers).
  let openapi: ReturnType<typeof openApiDocument> | null = null;
  app.get("/openapi.json", (c) => c.json(openapi ??= openApiDocument()));
  app.get("/metrics", async (c) => {
    await admin(c);
    metrics.audit(audit.committed, audit.commits);
    return c.text(await metrics.text(), 200, {
      "content-type": "text/plain; version=0.0.4; charset=utf-8",
    });
  });

  // ---- tenants (admin) ---------------------------------------------------------------------
  app.post("/v1/tenants", async (c) => {
    await admin(c);
    const body = validate(serverSchemas().tenantCreateSchema, await readJson(c, MAX_SMALL_BODY));
    const row: TenantRow = { id: body.id, policy: body.policy ?? {}, created_at: iso() };
    if (!(await store.createTenant(row))) {
      throw new ApiError(409, "TENANT_EXISTS", `tenant "${body.id}" already exists`);
    }
    return c.json(row, 201);
  });
  app.get("/v1/tenants", async (c) => {
    await admin(c);
    return c.json({ items: await store.listTenants() });
  });
  app.get("/v1/tenants/:id", async (c) => {
    await admin(c);
    const tenant = await store.getTenant(param(c, "id", serverSchemas().idSchema));
    if (!tenant) throw tenantNotFound(c.req.param("id"));
    return c.json(tenant);
  });
  app.delete("/v1/tenants/:id", async (c) => {
    await admin(c);
    const id = param(c, "id", serverSchemas().idSchema);
    if (!(await store.deleteTenant(id))) throw tenantNotFound(id);
    return c.body(null, 204);
  });
  app.put("/v1/tenants/:id/policy", async (c) => {
    await admin(c);
    const id = param(c, "id", serverSchemas().idSchema);
    const policy = validate(serverSchemas().policySchema, await readJson(c, MAX_SMALL_BODY));
    if (!(await store.setPolicy(id, policy))) throw tenantNotFound(id);
    return c.json(policy);
  });
  app.post("/v1/tenants/:id/keys", async (c) => {
    await admin(c);
    const id = param(c, "id", serverSchemas().idSchema);
    const body = validate(serverSchemas().keyCreateSchema, await readJson(c, MAX_SMALL_BODY, true));
    if (!(await store.getTenant(id))) throw tenantNotFound(id);
    const key = newKey();
    const keyId = newId("key");
    await store.createKey({
      id: keyId,
      tenant_id: id,
      name: body.name ?? null,
      hash: await hashKey(key),
      created_at: iso(),
    });
    return c.json({ id: keyId, key }, 201);
  });
  app.delete("/v1/tenants/:id/keys/:key_id", async (c) => {
    await admin(c);
    const id = param(c, "id", serverSchemas().idSchema);
    if (!(await store.revokeKey(id, c.req.param("key_id")))) {
      throw new ApiError(404, "KEY_NOT_FOUND", "no such live key for this tenant");
    }
    return c.body(null, 204);
  });

  // ---- hooks -------------------------------------------------------------------------------
  /**
   * Refuses an upload that would take a tenant past its hook count or stored
   * bytes: before the build with the uploaded files (and the hook count),
   * after it with the plugin built from them too (`plugin`; the bytes only,
   * read again since the build may have taken a while).
   */
  const withinStorage = async (
    tenantId: string,
    name: string,
    uploaded: number,
    plugin?: number,
  ) => {
    const refuse = (code: string, message: string) =>
      new ApiError(422, "HOOK_REJECTED", `the hook was rejected: ${message}`, {
        problems: [{ code, path: name, field: null, message }],
      });
    const [hooks, stored] = await Promise.all([
      plugin === undefined ? store.listHooks(tenantId) : null,
      store.storedBytes(tenantId),
    ]);
    if (
      hooks !== null && !hooks.some((h) => h.name === name) &&
      hooks.length >= storage.hooksPerTenant
    ) {
      throw refuse(
        "HOOK_TOO_MANY",
        `the tenant has ${hooks.length} hooks, at most ${storage.hooksPerTenant}; delete one first`,
      );
    }
    if (stored + uploaded + (plugin ?? 0) > storage.bytesPerTenant) {
      throw refuse(
        "HOOK_FILE_TOO_LARGE",
        `the tenant's hooks hold ${stored} bytes; with this upload they would pass the ` +
          `${storage.bytesPerTenant}-byte quota; delete hooks first`,
      );
    }
  };
  /**
   * Stores a version; for a tenant, its storage caps and its existence are
   * checked in the same transaction (`NewHookVersion.caps`).
   */
  const addVersion = async (
    scope: string,
    name: string,
    tenant: TenantRow | null,
    version: NewHookVersion,
  ) => {
    if (tenant === null) return await store.addHookVersion(scope, name, version);
    const caps = {
      hooks: storage.hooksPerTenant,
      bytes: storage.bytesPerTenant,
      tenantCreatedAt: tenant.created_at,
    };
    try {
      return await store.addHookVersion(scope, name, { ...version, caps });
    } catch (err) {
      if (!(err instanceof VersionRefused)) throw err;
      if (err.code === "TENANT_GONE") throw tenantNotFound(tenant.id);
      throw new ApiError(422, "HOOK_REJECTED", `the hook was rejected: ${err.message}`, {
        problems: [{ code: err.code, path: name, field: null, message: err.message }],
      });
    }
  };
  const upload = async (c: Context, scope: string, tenant: TenantRow | null) => {
    const name = param(c, "name", serverSchemas().hookNameSchema);
    const release = await uploads.admit(scope); // before the body: a waiting upload holds no memory
    try {
      return await uploadAdmitted(c, scope, name, tenant);
    } finally {
      release();
    }
  };
  const uploadAdmitted = async (
    c: Context,
    scope: string,
    name: string,
    tenant: TenantRow | null,
  ) => {
    const files = await readFolder(c, builder.unpack?.bind(builder));
    if (scope !== PLATFORM && (await store.getHook(PLATFORM, name))) {
      throw new ApiError(
        409,
        "HOOK_NAME_CONFLICT",
        `"${name}" is a platform hook; a tenant hook cannot replace it`,
      );
    }
    const uploaded = [...files.values()].reduce((n, bytes) => n + bytes.byteLength, 0);
    if (scope !== PLATFORM) await withinStorage(scope, name, uploaded);
    let built;
    try {
      built = await uploads.build(() => builder.build(name, files));
    } catch (err) {
      if (err instanceof HookRejected) {
        const compile = err.problems.find((p) => p.code.startsWith("COMPILE"));
        const message = compile
          ? `the hook does not compile: ${compile.message}`
          : `the hook was rejected: ${err.problems[0]?.message ?? "invalid"}`;
        throw new ApiError(422, "HOOK_REJECTED", message, { problems: err.problems });
      }
      throw err;
    }
    const artefact = built.plugin ?? files.get("HOOK.md")!;
    const sha256 = await sha256Hex(artefact);
    await store.putBlob(sha256, artefact);
    // The sources too, content-addressed: tenants uploading the same file share it.
    const sources: Record<string, string> = {};
    for (const [path, bytes] of files) {
      sources[path] = await sha256Hex(bytes);
      await store.putBlob(sources[path], bytes);
    }
    const row = await addVersion(scope, name, tenant, {
      sha256,
      runtime: built.runtime,
      size_bytes: artefact.byteLength,
      manifest: built.manifest,
      body: built.body,
      built_from: built.builtFrom,
      sources,
      created_at: iso(),
      stored_bytes: artefact.byteLength + uploaded,
    });
    await store.pruneVersions(scope, name, storage.versionsPerHook);
    return c.json({
      name,
      version: row.version,
      sha256,
      runtime: row.runtime,
      size_bytes: row.size_bytes,
      enabled: row.enabled,
      built_from: row.built_from,
    }, 201);
  };
  app.put("/v1/platform/hooks/:name", async (c) => {
    await admin(c);
    return await upload(c, PLATFORM, null);
  });
  app.delete("/v1/platform/hooks/:name", async (c) => {
    await admin(c);
    const name = param(c, "name", serverSchemas().hookNameSchema);
    if (!(await store.deleteHook(PLATFORM, name))) throw hookNotFound(name);
    return c.body(null, 204);
  });
  app.put("/v1/hooks/:name", async (c) => {
    const tenant = await tenantOf(c);
    const answer = await upload(c, tenant.id, tenant);
    // The new version is compiled for the workers now, not by its first event; a failure
    // here is the first event's to report.
    engine.prepare(tenant.id, tenant.policy).catch((err) =>
      log({ at: iso(), level: "warn", msg: "prepare after upload", error: String(err) })
    );
    return answer;
  });
  app.get("/v1/hooks", async (c) => {
    const tenant = await tenantOf(c);
    const list = (id: string) => store.listHookItems?.(id) ?? store.listHooks(id);
    const [platform, own] = await Promise.all([list(PLATFORM), list(tenant.id)]);
    return c.json({ items: [...platform, ...own].map(hookItem) });
  });
  app.get("/v1/hooks/:name", async (c) => {
    const tenant = await tenantOf(c);
    const name = param(c, "name", serverSchemas().hookNameSchema);
    const hook = (await store.getHook(tenant.id, name)) ?? (await store.getHook(PLATFORM, name));
    if (!hook) throw hookNotFound(name);
    return c.json(hookDetail(hook));
  });
  /** The tenant's own hook `name`; a platform hook's name is 403, anything else 404. */
  const ownHook = async (tenant: TenantRow, name: string): Promise<void> => {
    if (await store.getHook(tenant.id, name)) return;
    if (await store.getHook(PLATFORM, name)) {
      throw forbidden(`"${name}" is a platform hook; tenants cannot change it`);
    }
    throw hookNotFound(name);
  };
  app.patch("/v1/hooks/:name", async (c) => {
    const tenant = await tenantOf(c);
    const name = param(c, "name", serverSchemas().hookNameSchema);
    const body = validate(serverSchemas().patchSchema, await readJson(c, MAX_SMALL_BODY));
    await ownHook(tenant, name);
    const row = await store.setEnabled(tenant.id, name, body.enabled);
    if (!row) throw hookNotFound(name);
    return c.json(hookItem(row));
  });
  app.post("/v1/hooks/:name/rollback", async (c) => {
    const tenant = await tenantOf(c);
    const name = param(c, "name", serverSchemas().hookNameSchema);
    const body = validate(serverSchemas().rollbackSchema, await readJson(c, MAX_SMALL_BODY));
    await ownHook(tenant, name);
    const done = await store.rollback(tenant.id, name, body.version);
    if (done === "no-hook") throw hookNotFound(name);
    if (done === "no-version") {
      throw new ApiError(404, "VERSION_NOT_FOUND", `"${name}" has no version ${body.version}`, {
        field: "version",
      });
    }
    const hook = await store.getHook(tenant.id, name);
    if (!hook) throw hookNotFound(name);
    return c.json(hookDetail(hook));
  });
  app.delete("/v1/hooks/:name", async (c) => {
    const tenant = await tenantOf(c);
    const name = param(c, "name", serverSchemas().hookNameSchema);
    await ownHook(tenant, name);
    if (!(await store.deleteHook(tenant.id, name))) throw hookNotFound(name);
    return c.body(null, 204);
  });

  // ---- events ------------------------------------------------------------------------------
  /**
   * Runs an event for `tenant` (answering `400` if it did not validate):
   * per-minute quotas, hooks, audit (committed first), metrics. The caller
   * holds the tenant's concurrency lease ({@linkcode leased}).
   */
  const dispatchFor = async (
    tenant: TenantRow,
    parsed: ParseEventResult,
    dryRun: boolean,
    started: number,
    generation: number | undefined,
  ): Promise<{ result: DispatchResult; decisionId: string }> => {
    if (!parsed.ok) {
      const { code, message, field } = parsed.error;
      throw new ApiError(400, code, message, field ? { field } : {});
    }
    const settle = audit.expect();
    let result: DispatchResult;
    let served: ServedHook[];
    let fuel: Awaited<ReturnType<Quotas["reserveFuel"]>> = null;
    try {
      await quotas.count(tenant.id, tenant.policy, dryRun);
      served = await engine.hooks(tenant.id, generation);
      // fuel_per_minute: reserved before the run, so instances running together stay within it.
      fuel = dryRun ? null : await quotas.reserveFuel(
        tenant.id,
        tenant.policy,
        engine.fuelCeiling(tenant.policy, served),
      );
      result = await engine.dispatch(tenant.id, tenant.policy, served, parsed.event, fuel?.granted);
      if (fuel !== null) {
        // Settled now, whatever the audit write does: the fuel was burnt.
        const used = result.hooks.reduce((sum, h) => sum + h.fuel, 0);
        await fuel.settle(used).catch((err) =>
          log({ at: iso(), level: "error", msg: "fuel charge failed", error: String(err) })
        );
      }
    } catch (err) {
      await fuel?.settle(0).catch(() => {});
      throw err;
    } finally {
      settle(); // the row follows synchronously: it is written below, or never
    }
    const decisionId = newId("dec", now());
    const row = auditRow(
      decisionId,
      tenant.id,
      iso(),
      parsed.event.session_id,
      result,
      served,
      dryRun,
    );
    try {
      row.tenant_created_at = tenant.created_at;
      await audit.write(row);
    } catch (err) {
      // Deleted while its event ran: nothing of it is kept, and there is no answer to give.
      if (err instanceof TenantGone) throw tenantNotFound(tenant.id);
      log({ at: iso(), level: "error", msg: "audit write failed", error: String(err) });
      throw storeUnavailable();
    }
    metrics.dispatched(tenant.id, result, (performance.now() - started) / 1000, dryRun);
    return { result, decisionId };
  };
  const eventLimit = (tenant: TenantRow) => (tenant.policy.input_kb ?? DEFAULT_INPUT_KB) * 1024;
  /**
   * Runs `fn` holding one of the tenant's `max_concurrent` leases, taken
   * before the request's body is read: a tenant at its limit is refused
   * (`429`) before its body costs this thread a parse. Per-minute refusals
   * come earlier still (`refuseEarly`).
   */
  const leased = async <T>(tenant: TenantRow, fn: () => Promise<T>): Promise<T> => {
    quotas.refuseEarly(tenant.id, tenant.policy);
    const release = await quotas.lease(tenant.id, tenant.policy);
    try {
      return await fn();
    } finally {
      await release();
    }
  };
  app.post("/v1/events", async (c) => {
    const started = performance.now();
    const { tenant, generation } = await dispatcherOf(c);
    const dryRun = ["1", "true"].includes(c.req.query("dry_run") ?? "");
    return await leased(tenant, async () => {
      // Parsed here, its text kept with it: a plugin worker is sent the text, not the object.
      const text = await readText(c, eventLimit(tenant));
      const parsed = parseEventText({ text, tenantId: tenant.id }, jsonOf(text));
      const { result, decisionId } = await dispatchFor(tenant, parsed, dryRun, started, generation);
      return c.json({ ...result, decision_id: decisionId });
    });
  });

  // HTTP hooks of agent CLIs (SPEC §8): the agent's payload in, its own answer out. The
  // answer is the JSON the command form prints (`{}` for no opinion); what the command form
  // says with exit 2 alone is answered as the agent's JSON deny where it has one.
  app.post("/v1/agents/:agent/events", async (c) => {
    const started = performance.now();
    const { tenant, generation } = await dispatcherOf(c);
    const agent = c.req.param("agent");
    if (!isAgentName(agent)) {
      throw new ApiError(
        404,
        "AGENT_UNKNOWN",
        `no adapter for agent "${agent}"; one of ${AGENTS.join(", ")}`,
      );
    }
    const form = c.req.query("form") ?? "http";
    if (form !== "http" && form !== "command") {
      throw new ApiError(400, "REQUEST_INVALID", 'form must be "http" or "command"', {
        field: "form",
      });
    }
    // The command form: what `hookbox dispatch --agent` would print and exit with.
    const reply = (answer: AgentAnswer) =>
      form === "command"
        ? c.json({ exit_code: answer.exitCode, stdout: answer.stdout, stderr: answer.stderr })
        : c.json(answerBody(answer));
    return await leased(tenant, async () => {
      let text = "";
      try {
        text = await readText(c, eventLimit(tenant));
        const body = jsonOf(text);
        if (typeof body !== "object" || body === null || Array.isArray(body)) {
          throw new ApiError(400, "EVENT_INVALID", "event must be a JSON object");
        }
        // Made into an event here, its text kept with it: a plugin worker is sent
        // the text and makes the same event of it (the same timestamp too).
        const source: EventText & { agent: NonNullable<EventText["agent"]> } = {
          text,
          tenantId: tenant.id,
          agent: { name: agent, event: c.req.query("event") || undefined, at: iso() },
        };
        let made: ReturnType<typeof agentEventOfText>;
        try {
          made = agentEventOfText(source, body);
        } catch (err) {
          if (!isHookboxError(err)) throw err;
          throw new ApiError(400, err.code, err.message, err.field ? { field: err.field } : {});
        }
        const { call, parsed } = made;
        if (parsed === null) return reply(passThrough(call));
        if (parsed.ok && parsed.event.event_type === "pre-agent-turn-stop" && agent !== "cursor") {
          // The stop budget, counted here: the agent says only whether this stop is a retry.
          const retry = call.input.stop_hook_active === true;
          const count = stops.next(tenant.id, agent, parsed.event.session_id, retry);
          source.agent.stopCount = count;
          parsed.event.stop_count = count;
        }
        const { result, decisionId } = await dispatchFor(
          tenant,
          parsed,
          false,
          started,
          generation,
        );
        c.header("x-hookbox-decision-id", decisionId);
        return reply(agentAnswer(call, result));
      } catch (err) {
        // SPEC §4.7: a payload the service cannot evaluate is the agent's block where a
        // closed hook of the tenant's (or a platform hook) could apply.
        if (!(err instanceof ApiError) || !UNREADABLE.has(err.code)) throw err;
        const served = await engine.hooks(tenant.id, generation);
        const head = readHead(text);
        const name = c.req.query("event") || head.event;
        const type = mappedType(agent, name);
        if (name !== undefined && type === null && agent !== "agenthooks") throw err;
        const guard = closedGuard(served.map((h) => h.definition), type, head.tool);
        if (guard === null) throw err;
        const reason = `hookbox cannot evaluate this ${name ?? "event"}: ${err.code}: ` +
          `${err.message}; hook "${guard.name}" guards it and fails closed`;
        return reply(unreadableBlock(agent, name, reason, guard.name));
      }
    });
  });

  // Audit items of edge Workers (`hookbox bundle --audit-url`), stored as the service's own.
  app.post("/v1/audit/ingest", async (c) => {
    await admin(c);
    const { items } = validate(
      serverSchemas().auditIngestSchema,
      await readJson(c, MAX_INGEST_BODY),
    );
    try {
      await store.appendAudit(items);
    } catch (err) {
      log({ at: iso(), level: "error", msg: "audit ingest failed", error: String(err) });
      throw storeUnavailable();
    }
    return c.json({ accepted: items.length }, 200);
  });

  app.get("/v1/audit", async (c) => {
    const tenant = await tenantOf(c);
    const query = validate(serverSchemas().auditQuerySchema, c.req.query());
    // Rows hold UTC instants as ISO text: `since` is compared as an instant, whatever its offset.
    if (query.since !== undefined) query.since = new Date(query.since).toISOString();
    try {
      return c.json(
        await store.readAudit({
          tenant_id: tenant.id,
          ...stripUndefined(query),
          scan: AUDIT_SCAN_ROWS,
          bytes: AUDIT_PAGE_BYTES,
        }),
      );
    } catch (err) {
      if (isHookboxError(err, "CURSOR_INVALID")) {
        throw new ApiError(400, "CURSOR_INVALID", err.message, { field: "cursor" });
      }
      throw err;
    }
  });

  return {
    app,
    audit,
    metrics,
    sweepBlobs: () => store.sweepBlobs(now() - BLOB_GRACE_MS),
    pruneUsage: () => store.pruneUsage(now() - USAGE_KEPT_MS),
    beginShutdown: () => {
      shuttingDown = true;
    },
    async pruneAudit() {
      let removed = 0;
      for (const tenant of await store.listTenants()) {
        const days = tenant.policy.audit_retention_days ?? 30;
        const before = new Date(now() - days * 86_400_000).toISOString();
        removed += await store.pruneAudit(tenant.id, before);
      }
      return removed;
    },
  };
}

/** A hook with its build and every version (`GET /v1/hooks/{name}`, and a rollback's answer). */
function hookDetail(hook: HookDetail) {
  return {
    ...hookItem(hook),
    runtime: hook.runtime,
    size_bytes: hook.size_bytes,
    built_from: hook.built_from,
    files: hook.sources,
    versions: hook.versions,
  };
}

function hookItem(row: HookItem) {
  return {
    name: row.name,
    level: row.tenant_id === PLATFORM ? "platform" as const : "tenant" as const,
    version: row.version,
    trigger: row.manifest.trigger,
    priority: row.manifest.priority,
    enabled: row.enabled,
    sha256: row.sha256,
  };
}

/**
 * Longest block reason an audit row keeps. The reason is what a hook printed
 * (up to its output cap, a megabyte by default): whole in every row, a hook
 * could make each of its tenant's events write a megabyte to the store every
 * tenant shares, on the thread that answers them (measured: 2.8 ms of that
 * thread per event). The answer still carries it whole.
 */
export const AUDIT_REASON_CHARS = 4096;

function auditRow(
  decisionId: string,
  tenantId: string,
  at: string,
  sessionId: string,
  result: DispatchResult,
  served: ServedHook[],
  dryRun: boolean,
): AuditRow {
  const byName = new Map(served.map((s) => [`${s.definition.level}:${s.definition.name}`, s]));
  return {
    decision_id: decisionId,
    tenant_id: tenantId,
    at,
    session_id: sessionId,
    event_type: result.event_type,
    decision: result.decision,
    // Hook output is kept storable, never refused: it is the hook's, not the request's.
    reason: result.reason === null ? null : storable(clipped(result.reason, AUDIT_REASON_CHARS)),
    blocked_by: result.blocked_by,
    dry_run: dryRun,
    hooks: result.hooks.map((h) => {
      const s = byName.get(`${h.level}:${h.name}`);
      return {
        name: h.name,
        level: h.level,
        version: s?.version ?? null,
        sha256: s?.sha256 ?? null,
        outcome: h.outcome,
        code: h.code,
        detail: h.detail === null ? null : storable(h.detail),
        duration_ms: h.duration_ms,
        fuel: h.fuel,
      };
    }),
  };
}

/** A path parameter, validated. */
function param<T>(c: Context, name: string, schema: z.ZodType<T>): T {
  const value = c.req.param(name);
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new ApiError(400, "REQUEST_INVALID", `${name} ${parsed.error.issues[0]?.message}`, {
      field: name,
    });
  }
  return parsed.data;
}

/** Validates `value`; a bad field is `400 REQUEST_INVALID` naming it. */
function validate<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) {
    // Text no store can hold is refused here, the same for both stores (schema/storable.ts).
    const field = unstorableAt(parsed.data);
    if (field === null) return parsed.data;
    throw new ApiError(
      400,
      "REQUEST_INVALID",
      `field "${field}" holds a NUL or a lone UTF-16 surrogate, which no store can hold`,
      { field },
    );
  }
  const issue = parsed.error.issues[0];
  const field = issue?.path.map(String).join(".") || undefined;
  const keys = issue?.code === "unrecognized_keys" ? ` ${issue.keys.join(", ")}` : "";
  const message = `${field ? `field "${field}": ` : ""}${issue?.message ?? "invalid"}${keys}`;
  throw new ApiError(400, "REQUEST_INVALID", message, field ? { field } : {});
}

/**
 * Reads the body up to `max` bytes (`413 BODY_TOO_LARGE` past it). A body
 * whose length is declared (`Content-Length`, no `Transfer-Encoding`) and
 * within `max` is taken whole: the HTTP layer ends it at the declared length,
 * and one native read is much cheaper than a stream loop (about 150 µs per
 * request in workerd). Any other body is read chunk by chunk and cut off at
 * `max`; a body longer than its declared length (possible in process) is
 * still refused.
 */
async function readBody(c: Context, max: number): Promise<Uint8Array> {
  try {
    return await readBodyBytes(c.req.raw, max);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    // The client went away mid-body, sent a broken chunked encoding, or the
    // server is shutting down: an answer, not an internal error in the log.
    throw new ApiError(
      400,
      "BODY_UNREADABLE",
      `the request body could not be read: ${messageOf(err).slice(0, 200)}`,
    );
  }
}

/** Longest a request body may take to arrive, ms: a trickled body is cut off. */
export const BODY_READ_MS = 10_000;
/** A service's own `bodyReadMs`, per request (set only when the service names one). */
const BODY_DEADLINES = new WeakMap<Request, number>();
/**
 * Most pieces a streamed body may arrive in, past a floor: each piece costs
 * the thread that answers every tenant a turn of JavaScript (80,000 one-byte
 * chunks held it for seconds). An honest client sends a body in pieces of
 * many bytes.
 */
const bodyPieces = (max: number) => 64 + Math.ceil(max / 256);

async function readBodyBytes(request: Request, max: number): Promise<Uint8Array> {
  const length = request.headers.get("content-length");
  const declared = length !== null && /^\d{1,15}$/.test(length) ? Number(length) : NaN;
  if (declared > max) throw tooLarge(max);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const ms = BODY_DEADLINES.get(request) ?? BODY_READ_MS;
  const slow = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      request.body?.cancel().catch(() => {});
      reject(new ApiError(408, "BODY_TOO_SLOW", `the body did not arrive within ${ms} ms`));
    }, ms);
  });
  try {
    if (declared >= 0 && !request.headers.has("transfer-encoding")) {
      const bytes = new Uint8Array(await Promise.race([request.arrayBuffer(), slow]));
      if (bytes.byteLength > max) throw tooLarge(max);
      return bytes;
    }
    return await Promise.race([readPieces(request.body, max), slow]);
  } finally {
    clearTimeout(timer);
  }
}

/** A streamed body, at most `max` bytes in at most {@linkcode bodyPieces} pieces. */
async function readPieces(
  stream: ReadableStream<Uint8Array> | null,
  max: number,
): Promise<Uint8Array> {
  if (stream === null) return new Uint8Array(0);
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  const pieces = bodyPieces(max);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max || chunks.length >= pieces) {
      await reader.cancel().catch(() => {});
      if (total > max) throw tooLarge(max);
      throw new ApiError(
        400,
        "BODY_UNREADABLE",
        `the body came in more than ${pieces} pieces; send it in larger ones`,
      );
    }
    chunks.push(value);
  }
  return concatBytes(chunks, total);
}

/** Strict UTF-8 (a bad byte is an error, not U+FFFD); stateless, so one serves every request. */
const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** Reads a JSON body (`400 JSON_INVALID`); an empty body is `{}` when `emptyOk`. */
async function readJson(c: Context, max: number, emptyOk = false): Promise<unknown> {
  const text = await readText(c, max);
  if (text.length === 0 && emptyOk) return {};
  return jsonOf(text);
}

/** `text` parsed; text that is not JSON is `400 JSON_INVALID`. */
function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ApiError(400, "JSON_INVALID", `body is not valid JSON: ${(err as Error).message}`);
  }
}

/** The body as UTF-8 text, at most `max` bytes; bytes that are not UTF-8 are `400 JSON_INVALID`. */
async function readText(c: Context, max: number): Promise<string> {
  const bytes = await readBody(c, max);
  try {
    return UTF8.decode(bytes);
  } catch (err) {
    throw new ApiError(400, "JSON_INVALID", `body is not valid JSON: ${(err as Error).message}`);
  }
}

/** The uploaded folder: JSON `{files}` or a gzip'd tar (`Content-Type: application/gzip`). */
async function readFolder(
  c: Context,
  unpackOn?: (archive: Uint8Array) => Promise<Map<string, Uint8Array>>,
): Promise<Map<string, Uint8Array>> {
  const type = (c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (
    type === "application/gzip" || type === "application/x-gzip" ||
    type === "application/x-tar+gzip"
  ) {
    const archive = await readBody(c, MAX_UPLOAD_BYTES);
    // Inflated and read where the builder says (the Deno builder: a worker of its own), so
    // that a hostile archive costs the thread answering every tenant nothing.
    return await (unpackOn ?? unpackArchive)(archive);
  }
  const body = validate(serverSchemas().uploadSchema, await readJson(c, MAX_UPLOAD_BYTES));
  const files = new Map<string, Uint8Array>();
  const encoder = new TextEncoder();
  for (const [path, value] of Object.entries(body.files)) {
    if (typeof value === "string") files.set(path, encoder.encode(value));
    else {
      try {
        files.set(path, base64Bytes(value.base64));
      } catch {
        throw new ApiError(400, "REQUEST_INVALID", `field "files.${path}": base64 is invalid`, {
          field: `files.${path}`,
        });
      }
    }
  }
  return files;
}

function tooLarge(max: number): ApiError {
  return new ApiError(413, "BODY_TOO_LARGE", `body is over the ${max}-byte cap`);
}

function storeOrInternal(err: unknown, log: (e: Record<string, unknown>) => void): ApiError {
  if (err instanceof StoreUnavailable) {
    log({ at: new Date().toISOString(), level: "error", msg: "store", error: err.message });
    return new ApiError(503, "STORE_UNAVAILABLE", "the store did not answer; retry later", {
      retryAfter: 1,
    });
  }
  log({ at: new Date().toISOString(), level: "error", msg: "unhandled", error: String(err) });
  if (isHookboxError(err)) return new ApiError(400, err.code, err.message);
  return new ApiError(500, "INTERNAL", "internal error; see the server log");
}

function stripUndefined<T extends Record<string, unknown>>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** Errors that mean the service could not evaluate an agent's payload (SPEC §4.7). */
const UNREADABLE = new Set([
  "BODY_TOO_LARGE",
  "JSON_INVALID",
  "EVENT_INVALID",
  "EVENT_JSON_INVALID",
  "JSON_TOO_DEEP",
]);

/** An agent answer as an HTTP body: its JSON, `{}` for none, a deny for an exit-2-only block. */
function answerBody(answer: AgentAnswer): Record<string, unknown> {
  if (answer.stdout) return JSON.parse(answer.stdout);
  if (answer.exitCode === 2) return { decision: "block", reason: answer.stderr };
  return {};
}
