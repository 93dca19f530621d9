/**
 * Hooks: a tenant's own (upload, list, read, enable, roll back, delete) and
 * the platform's (admin key). An upload is admitted by the upload gate before
 * its body is read, unpacked off the request thread, built, checked against
 * the tenant's storage caps in the version's own transaction, and stored.
 *
 * @module
 */
import type { Context } from "hono";
import { z } from "@hono/zod-openapi";
import { sha256Hex } from "../../core/bytes.ts";
import type { ErrorCode } from "../../core/errors.ts";
import { HookRejected } from "../builder.ts";
import { ApiError, forbidden, hookNotFound, tenantNotFound } from "../errors.ts";
import { MAX_SMALL_BODY, param, readFolder, readJson, validate } from "../request.ts";
import { serverSchemas } from "../schemas.ts";
import {
  type HookDetail,
  type HookItem,
  type NewHookVersion,
  PLATFORM,
  type TenantRow,
  VersionRefused,
} from "../../store/store.ts";
import type { ServiceContext } from "./context.ts";
import type { Route } from "./route.ts";

/** The routes of `/v1/hooks` and `/v1/platform/hooks`. */
export function hookRoutes(ctx: ServiceContext): Route[] {
  const { store, engine, builder, storage, uploads, iso, log } = ctx;
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
    const refuse = (code: ErrorCode, message: string) =>
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
    const name = hookName(c);
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
  /** The tenant's own hook `name`; a platform hook's name is 403, anything else 404. */
  const ownHook = async (tenant: TenantRow, name: string): Promise<void> => {
    if (await store.getHook(tenant.id, name)) return;
    if (await store.getHook(PLATFORM, name)) {
      throw forbidden(`"${name}" is a platform hook; tenants cannot change it`);
    }
    throw hookNotFound(name);
  };
  const hookName = (c: Context) => param(c, "name", serverSchemas().hookNameSchema);
  return [
    {
      method: "put",
      path: "/v1/platform/hooks/{name}",
      who: "admin",
      docs: (s) => ({
        summary: "Upload a platform hook",
        params: { name: s.hookNameSchema },
        body: s.uploadSchema,
        gzip: true,
        ok: { status: 201, schema: s.uploadedSchema },
        extra: { 422: "HOOK_REJECTED", 429: "QUOTA_EXCEEDED" },
      }),
      handler: (c) => upload(c, PLATFORM, null),
    },
    {
      method: "delete",
      path: "/v1/platform/hooks/{name}",
      who: "admin",
      docs: (s) => ({
        summary: "Delete a platform hook",
        params: { name: s.hookNameSchema },
        ok: { status: 204 },
      }),
      handler: async (c) => {
        const name = hookName(c);
        if (!(await store.deleteHook(PLATFORM, name))) throw hookNotFound(name);
        return c.body(null, 204);
      },
    },
    {
      method: "put",
      path: "/v1/hooks/{name}",
      who: "tenant",
      docs: (s) => ({
        summary: "Upload a hook (a new version)",
        params: { name: s.hookNameSchema },
        body: s.uploadSchema,
        gzip: true,
        ok: { status: 201, schema: s.uploadedSchema },
        extra: { 409: "HOOK_NAME_CONFLICT", 422: "HOOK_REJECTED", 429: "QUOTA_EXCEEDED" },
      }),
      handler: async (c, { tenant }) => {
        const answer = await upload(c, tenant.id, tenant);
        // The new version is compiled for the workers now, not by its first event; a failure
        // here is the first event's to report.
        engine.prepare(tenant.id, tenant.policy).catch((err) =>
          log({ at: iso(), level: "warn", msg: "prepare after upload", error: String(err) })
        );
        return answer;
      },
    },
    {
      method: "get",
      path: "/v1/hooks",
      who: "tenant",
      docs: (s) => ({
        summary: "The tenant's hooks and the platform hooks",
        ok: { status: 200, schema: z.object({ items: z.array(s.hookItemSchema) }) },
      }),
      handler: async (c, { tenant }) => {
        const list = (id: string) => store.listHookItems?.(id) ?? store.listHooks(id);
        const [platform, own] = await Promise.all([list(PLATFORM), list(tenant.id)]);
        return c.json({ items: [...platform, ...own].map(hookItem) });
      },
    },
    {
      method: "get",
      path: "/v1/hooks/{name}",
      who: "tenant",
      docs: (s) => ({
        summary: "One hook with its versions",
        params: { name: s.hookNameSchema },
        ok: { status: 200, schema: s.hookDetailSchema },
      }),
      handler: async (c, { tenant }) => {
        const name = hookName(c);
        const hook = (await store.getHook(tenant.id, name)) ??
          (await store.getHook(PLATFORM, name));
        if (!hook) throw hookNotFound(name);
        return c.json(hookDetail(hook));
      },
    },
    {
      method: "patch",
      path: "/v1/hooks/{name}",
      who: "tenant",
      docs: (s) => ({
        summary: "Enable or disable a hook",
        params: { name: s.hookNameSchema },
        body: s.patchSchema,
        ok: { status: 200, schema: s.hookItemSchema },
      }),
      handler: async (c, { tenant }) => {
        const name = hookName(c);
        const body = validate(serverSchemas().patchSchema, await readJson(c, MAX_SMALL_BODY));
        await ownHook(tenant, name);
        const row = await store.setEnabled(tenant.id, name, body.enabled);
        if (!row) throw hookNotFound(name);
        return c.json(hookItem(row));
      },
    },
    {
      method: "post",
      path: "/v1/hooks/{name}/rollback",
      who: "tenant",
      docs: (s) => ({
        summary: "Make an earlier version active",
        params: { name: s.hookNameSchema },
        body: s.rollbackSchema,
        ok: { status: 200, schema: s.hookDetailSchema },
      }),
      handler: async (c, { tenant }) => {
        const name = hookName(c);
        const body = validate(serverSchemas().rollbackSchema, await readJson(c, MAX_SMALL_BODY));
        await ownHook(tenant, name);
        const done = await store.rollback(tenant.id, name, body.version);
        if (done === "no-hook") throw hookNotFound(name);
        if (done === "no-version") {
          throw new ApiError(
            404,
            "VERSION_NOT_FOUND",
            `"${name}" has no version ${body.version}`,
            { field: "version" },
          );
        }
        const hook = await store.getHook(tenant.id, name);
        if (!hook) throw hookNotFound(name);
        return c.json(hookDetail(hook));
      },
    },
    {
      method: "delete",
      path: "/v1/hooks/{name}",
      who: "tenant",
      docs: (s) => ({
        summary: "Delete a hook",
        params: { name: s.hookNameSchema },
        ok: { status: 204 },
      }),
      handler: async (c, { tenant }) => {
        const name = hookName(c);
        await ownHook(tenant, name);
        if (!(await store.deleteHook(tenant.id, name))) throw hookNotFound(name);
        return c.body(null, 204);
      },
    },
  ];
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
