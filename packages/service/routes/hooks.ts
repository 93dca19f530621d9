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
import { ApiError, forbidden, hookNotFound } from "../errors.ts";
import { MAX_SMALL_BODY, param, readJson, validate } from "../request.ts";
import { serverSchemas } from "../schemas.ts";
import {
  type HookDetail,
  type HookItem,
  PLATFORM,
  type Store,
  type TenantRow,
} from "../../store/store.ts";
import type { HookBuilder } from "../builder.ts";
import type { ServiceContext } from "./context.ts";
import type { Route } from "./route.ts";
import { upload } from "./upload.ts";

/** The `{name}` of a hook route, validated. */
export const hookName = (c: Context): string => param(c, "name", serverSchemas().hookNameSchema);

/** The tenant's own hook `name`; a platform hook's name is 403, anything else 404. */
export async function ownHook(store: Store, tenant: TenantRow, name: string): Promise<void> {
  if (await store.getHook(tenant.id, name)) return;
  if (await store.getHook(PLATFORM, name)) {
    throw forbidden(`"${name}" is a platform hook; tenants cannot change it`);
  }
  throw hookNotFound(name);
}

/** The routes of `/v1/hooks` and `/v1/platform/hooks`. */
export function hookRoutes(ctx: ServiceContext): Route[] {
  const { store, engine, iso, log } = ctx;
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
      handler: (c) => upload(ctx, c, PLATFORM, hookName(c), null),
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
        const answer = await upload(ctx, c, tenant.id, hookName(c), tenant);
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
        return ctx.held.value(c, tenant.id, { items: [...platform, ...own].map(hookItem) });
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
        await ownHook(store, tenant, name);
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
        await ownHook(store, tenant, name);
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
      method: "post",
      path: "/v1/hooks/{name}/versions/{version}/test",
      who: "tenant",
      docs: (s) => ({
        summary:
          "Run a version's own tests (tests/*.json) through the sandbox, active or staged (?stage=1)",
        params: { name: s.hookNameSchema, version: z.string().regex(/^\d+$/) },
        ok: { status: 200, schema: s.hookTestReportSchema },
        extra: {
          429: "QUOTA_EXCEEDED: the tenant's uploads and test runs are at their bound",
          501: "NOT_IMPLEMENTED: this service cannot run tests (an edge Worker)",
        },
      }),
      handler: async (c, { tenant }) => {
        const name = hookName(c);
        const version = Number(c.req.param("version"));
        await ownHook(store, tenant, name);
        const row = Number.isSafeInteger(version) && version > 0
          ? await store.getVersion(tenant.id, name, version)
          : null;
        if (row === null) {
          throw new ApiError(
            404,
            "VERSION_NOT_FOUND",
            `"${name}" has no version ${c.req.param("version")}`,
            {
              field: "version",
            },
          );
        }
        const test = ctx.builder.test?.bind(ctx.builder);
        if (test === undefined) {
          throw new ApiError(501, "NOT_IMPLEMENTED", "this service cannot run hook tests");
        }
        // A test run starts a process as a build does: it takes one of the tenant's upload
        // slots (past its queue, 429) and one of the server's build slots.
        const release = await ctx.uploads.admit(tenant.id);
        try {
          return await testVersion(ctx, c, tenant.id, name, version, row.sources, test);
        } finally {
          release();
        }
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
        await ownHook(store, tenant, name);
        if (!(await store.deleteHook(tenant.id, name))) throw hookNotFound(name);
        return c.body(null, 204);
      },
    },
  ];
}

/** A hook with its build and every version (`GET /v1/hooks/{name}`, and a rollback's answer). */
/**
 * The answer of a version's own tests (`tests/*.json`): its files read from
 * the store, then `test` run in one of the server's build slots.
 */
async function testVersion(
  ctx: ServiceContext,
  c: Context,
  tenantId: string,
  name: string,
  version: number,
  sources: Record<string, string>,
  test: NonNullable<HookBuilder["test"]>,
): Promise<Response> {
  const files = new Map<string, Uint8Array>();
  for (const [path, sha256] of Object.entries(sources)) {
    const bytes = await ctx.store.getBlob(sha256);
    if (bytes === null) {
      throw new ApiError(500, "INTERNAL", `a file of version ${version} is gone`);
    }
    files.set(path, bytes);
  }
  const hasCases = [...files.keys()].some((p) => /^tests\/[^/]+\.json$/.test(p));
  const report = hasCases
    ? await ctx.uploads.build(tenantId, () => test(name, files))
    : { cases: [] };
  return ctx.held.value(c, tenantId, {
    name,
    version,
    passed: report.cases.length > 0 && report.cases.every((r) => r.passed),
    cases: report.cases,
  });
}

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
