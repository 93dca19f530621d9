/**
 * Replay and shadow (docs/replay.md): a candidate version of a tenant's hook
 * run on the tenant's captured events, or beside the active version on live
 * ones; what it would answer differently is reported, never applied.
 *
 * @module
 */
import { z } from "@hono/zod-openapi";
import { isHookboxError } from "../../core/errors.ts";
import { ApiError, hookNotFound } from "../errors.ts";
import { replayPage } from "../replay.ts";
import { MAX_SMALL_BODY, readJson, validate } from "../request.ts";
import { serverSchemas } from "../schemas.ts";
import type { Store } from "../../store/store.ts";
import type { ServiceContext } from "./context.ts";
import { leased } from "./events.ts";
import { hookName, ownHook } from "./hooks.ts";
import type { Route } from "./route.ts";

const NO_SHADOWS = "this service keeps no shadows (an edge Worker)";

function shadowStore(store: Store): Required<Pick<Store, "setShadow" | "readShadow">> {
  if (store.setShadow === undefined || store.readShadow === undefined) {
    throw new ApiError(501, "NOT_IMPLEMENTED", NO_SHADOWS);
  }
  return { setShadow: store.setShadow.bind(store), readShadow: store.readShadow.bind(store) };
}

/** The routes of replay and shadow. */
export function replayRoutes(ctx: ServiceContext): Route[] {
  const { store, quotas, iso } = ctx;
  const report = async (tenantId: string, name: string, query: Record<string, string>) => {
    const page = validate(serverSchemas().shadowQuerySchema, query);
    try {
      return await shadowStore(store).readShadow(tenantId, name, page);
    } catch (err) {
      if (isHookboxError(err, "CURSOR_INVALID")) {
        throw new ApiError(400, "CURSOR_INVALID", err.message, { field: "cursor" });
      }
      throw err;
    }
  };
  return [
    {
      method: "post",
      path: "/v1/hooks/{name}/versions/{version}/replay",
      who: "tenant",
      docs: (s) => ({
        summary:
          "Run a version on the tenant's captured events beside the active chain; the events whose answer it changes, oldest first",
        params: { name: s.hookNameSchema, version: z.string().regex(/^\d+$/) },
        query: s.replayQuerySchema,
        ok: { status: 200, schema: s.replayReportSchema },
        extra: {
          429: "QUOTA_EXCEEDED",
          501: "NOT_IMPLEMENTED: this service keeps no events (an edge Worker)",
        },
      }),
      handler: async (c, { tenant }) => {
        const name = hookName(c);
        const query = validate(serverSchemas().replayQuerySchema, c.req.query());
        await ownHook(store, tenant, name);
        const version = Number(c.req.param("version"));
        // Under one of the tenant's leases, as its events are: a replay is its hooks running.
        const page = await leased(
          quotas,
          tenant,
          () => replayPage(ctx, tenant, name, version, query),
        );
        return ctx.held.value(c, tenant.id, page);
      },
    },
    {
      method: "put",
      path: "/v1/hooks/{name}/shadow",
      who: "tenant",
      docs: (s) => ({
        summary:
          "Run a version in shadow: beside the active one on live events, compared, never applied (a new shadow starts with no runs)",
        params: { name: s.hookNameSchema },
        body: s.shadowSetSchema,
        ok: { status: 200, schema: s.shadowReportSchema },
        extra: { 501: `NOT_IMPLEMENTED: ${NO_SHADOWS}` },
      }),
      handler: async (c, { tenant }) => {
        const name = hookName(c);
        const { version } = validate(
          serverSchemas().shadowSetSchema,
          await readJson(c, MAX_SMALL_BODY),
        );
        await ownHook(store, tenant, name);
        if (!(await shadowStore(store).setShadow(tenant.id, name, version, iso()))) {
          throw new ApiError(404, "VERSION_NOT_FOUND", `"${name}" has no version ${version}`, {
            field: "version",
          });
        }
        return ctx.held.value(c, tenant.id, await report(tenant.id, name, {}));
      },
    },
    {
      method: "get",
      path: "/v1/hooks/{name}/shadow",
      who: "tenant",
      docs: (s) => ({
        summary:
          "A shadow's totals (runs, agreed) and its disagreements, newest first; `shadow` is null when none runs",
        params: { name: s.hookNameSchema },
        query: s.shadowQuerySchema,
        ok: { status: 200, schema: s.shadowReportSchema },
        extra: { 501: `NOT_IMPLEMENTED: ${NO_SHADOWS}` },
      }),
      handler: async (c, { tenant }) => {
        const name = hookName(c);
        await ownHook(store, tenant, name);
        return ctx.held.value(c, tenant.id, await report(tenant.id, name, c.req.query()));
      },
    },
    {
      method: "delete",
      path: "/v1/hooks/{name}/shadow",
      who: "tenant",
      docs: (s) => ({
        summary: "Stop a shadow and delete its runs",
        params: { name: s.hookNameSchema },
        ok: { status: 204 },
        extra: { 501: `NOT_IMPLEMENTED: ${NO_SHADOWS}` },
      }),
      handler: async (c, { tenant }) => {
        const name = hookName(c);
        await ownHook(store, tenant, name);
        if (!(await shadowStore(store).setShadow(tenant.id, name, null, iso()))) {
          throw hookNotFound(name);
        }
        return c.body(null, 204);
      },
    },
  ];
}
