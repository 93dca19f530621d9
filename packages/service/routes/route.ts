/**
 * One declaration per route: its method, path, who may call it, what it
 * takes and answers (for the OpenAPI document), and its handler. A resource's
 * routes are mounted as one sub-app; the document is generated from the same
 * declarations (`service/openapi.ts`), so the two cannot drift.
 *
 * The declarations do not go through `OpenAPIHono.openapi()`: its validators
 * would read a body with no size cap or deadline and answer a bad field before
 * the caller is known. Bodies are read and checked by the handlers
 * (`server/request.ts`), after auth.
 *
 * @module
 */
import { type Context, Hono } from "hono";
import type { z } from "@hono/zod-openapi";
import type { ServerSchemas } from "../schemas.ts";
import type { TenantRow } from "../../store/store.ts";

/** Who may call a route: the admin key, a tenant key, or anyone. */
export type Who = "admin" | "tenant" | "anyone";

/** What a route takes and answers, for the OpenAPI document. */
export interface RouteDocs {
  summary: string;
  params?: Record<string, z.ZodType>;
  query?: z.ZodObject;
  body?: z.ZodType;
  /** The body may also be a gzip'd tar. */
  gzip?: boolean;
  ok: { status: number; schema?: z.ZodType; text?: boolean; html?: boolean };
  /** Statuses this route answers besides the common ones, with their codes. */
  extra?: Record<number, string>;
}

/** The caller of a tenant route: its tenant, and the hooks generation when asked for. */
export interface Caller {
  tenant: TenantRow;
  generation: number | undefined;
  /**
   * Set on a `lastKnown` route when the call cannot be answered, to why: the
   * store could not check the key (`tenant` is then the one the key named
   * when it was last checked), or the tenant's requests hold all they may.
   */
  refused?: unknown;
}

/** A route: declared once, mounted and documented from here. */
export interface Route {
  method: "get" | "post" | "put" | "patch" | "delete";
  /** OpenAPI form: `/v1/hooks/{name}`. */
  path: string;
  who: Who;
  /**
   * Tenant routes that run hooks: the hooks generation is read with the key
   * (one look at the store), so the hooks are those current when the request came.
   */
  generation?: boolean;
  /**
   * Tenant routes that go on when the store cannot check the key, with the
   * tenant it last named in this process, and past a refusal of the gate's
   * (`Caller.refused` says why): the handler decides what to answer.
   */
  lastKnown?: boolean;
  /** Built when the document is first asked for (the schemas are built lazily). */
  docs: (schemas: ServerSchemas) => RouteDocs;
  /** `caller` is set on tenant routes. */
  handler: (c: Context, caller: Caller) => Response | Promise<Response>;
}

/** How a sub-app learns who is calling. */
export interface Gate {
  admin(c: Context): Promise<void>;
  tenant(c: Context, withGeneration: boolean, lastKnown?: boolean): Promise<Caller>;
}

/** No caller (admin and public routes). */
const NOBODY = undefined as unknown as Caller;

/** A sub-app of `routes`, each behind the check its `who` names. */
export function mount(routes: readonly Route[], gate: Gate): Hono {
  const app = new Hono();
  for (const route of routes) {
    const path = route.path.replaceAll(/\{([a-z_]+)\}/g, ":$1");
    const { handler, who } = route;
    app.on(route.method.toUpperCase(), path, async (c) => {
      if (who === "admin") await gate.admin(c);
      const caller = who === "tenant"
        ? await gate.tenant(c, route.generation === true, route.lastKnown === true)
        : NOBODY;
      return await handler(c, caller);
    });
  }
  return app;
}
