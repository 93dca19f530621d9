/**
 * `GET /openapi.json`: the OpenAPI 3.1 document of every route, generated from
 * the zod schemas in `schemas.ts` that also validate the requests.
 *
 * @module
 */
import { AGENTS } from "../agents/adapters.ts";
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { serverSchemas } from "./schemas.ts";

type Method = "get" | "post" | "put" | "patch" | "delete";
type Who = "admin" | "tenant" | "anyone";

const json = (schema: z.ZodType) => ({ content: { "application/json": { schema } } });

interface RouteSpec {
  method: Method;
  path: string;
  who: Who;
  summary: string;
  params?: Record<string, z.ZodType>;
  query?: z.ZodObject;
  body?: z.ZodType;
  gzip?: boolean;
  ok: { status: number; schema?: z.ZodType; text?: boolean };
  extra?: Record<number, string>;
}

/** Every route's spec, built with the schemas when the document is first asked for. */
function routeSpecs(): RouteSpec[] {
  const {
    auditIngestAnswerSchema,
    auditIngestSchema,
    auditPageSchema,
    auditQuerySchema,
    dispatchAnswerSchema,
    eventBodySchema,
    hookDetailSchema,
    hookItemSchema,
    hookNameSchema,
    idSchema,
    keyCreatedSchema,
    keyCreateSchema,
    patchSchema,
    policySchema,
    rollbackSchema,
    tenantCreateSchema,
    tenantSchema,
    uploadedSchema,
    uploadSchema,
  } = serverSchemas();

  return [
    {
      method: "post",
      path: "/v1/tenants",
      who: "admin",
      summary: "Create a tenant",
      body: tenantCreateSchema,
      ok: { status: 201, schema: tenantSchema },
      extra: { 409: "TENANT_EXISTS" },
    },
    {
      method: "get",
      path: "/v1/tenants",
      who: "admin",
      summary: "List tenants",
      ok: { status: 200, schema: z.object({ items: z.array(tenantSchema) }) },
    },
    {
      method: "get",
      path: "/v1/tenants/{id}",
      who: "admin",
      summary: "One tenant",
      params: { id: idSchema },
      ok: { status: 200, schema: tenantSchema },
    },
    {
      method: "delete",
      path: "/v1/tenants/{id}",
      who: "admin",
      summary: "Delete a tenant with its hooks, keys and audit",
      params: { id: idSchema },
      ok: { status: 204 },
    },
    {
      method: "put",
      path: "/v1/tenants/{id}/policy",
      who: "admin",
      summary: "Replace a tenant's policy",
      params: { id: idSchema },
      body: policySchema,
      ok: { status: 200, schema: policySchema },
    },
    {
      method: "post",
      path: "/v1/tenants/{id}/keys",
      who: "admin",
      summary: "Create a tenant key (shown once)",
      params: { id: idSchema },
      body: keyCreateSchema,
      ok: { status: 201, schema: keyCreatedSchema },
    },
    {
      method: "delete",
      path: "/v1/tenants/{id}/keys/{key_id}",
      who: "admin",
      summary: "Revoke a key",
      params: { id: idSchema, key_id: z.string() },
      ok: { status: 204 },
    },
    {
      method: "put",
      path: "/v1/platform/hooks/{name}",
      who: "admin",
      summary: "Upload a platform hook",
      params: { name: hookNameSchema },
      body: uploadSchema,
      gzip: true,
      ok: { status: 201, schema: uploadedSchema },
      extra: { 422: "HOOK_REJECTED", 429: "QUOTA_EXCEEDED" },
    },
    {
      method: "delete",
      path: "/v1/platform/hooks/{name}",
      who: "admin",
      summary: "Delete a platform hook",
      params: { name: hookNameSchema },
      ok: { status: 204 },
    },
    {
      method: "put",
      path: "/v1/hooks/{name}",
      who: "tenant",
      summary: "Upload a hook (a new version)",
      params: { name: hookNameSchema },
      body: uploadSchema,
      gzip: true,
      ok: { status: 201, schema: uploadedSchema },
      extra: { 409: "HOOK_NAME_CONFLICT", 422: "HOOK_REJECTED", 429: "QUOTA_EXCEEDED" },
    },
    {
      method: "get",
      path: "/v1/hooks",
      who: "tenant",
      summary: "The tenant's hooks and the platform hooks",
      ok: { status: 200, schema: z.object({ items: z.array(hookItemSchema) }) },
    },
    {
      method: "get",
      path: "/v1/hooks/{name}",
      who: "tenant",
      summary: "One hook with its versions",
      params: { name: hookNameSchema },
      ok: { status: 200, schema: hookDetailSchema },
    },
    {
      method: "patch",
      path: "/v1/hooks/{name}",
      who: "tenant",
      summary: "Enable or disable a hook",
      params: { name: hookNameSchema },
      body: patchSchema,
      ok: { status: 200, schema: hookItemSchema },
    },
    {
      method: "post",
      path: "/v1/hooks/{name}/rollback",
      who: "tenant",
      summary: "Make an earlier version active",
      params: { name: hookNameSchema },
      body: rollbackSchema,
      ok: { status: 200, schema: hookDetailSchema },
    },
    {
      method: "delete",
      path: "/v1/hooks/{name}",
      who: "tenant",
      summary: "Delete a hook",
      params: { name: hookNameSchema },
      ok: { status: 204 },
    },
    {
      method: "post",
      path: "/v1/events",
      who: "tenant",
      summary: "Dispatch an event",
      query: z.object({ dry_run: z.enum(["0", "1", "true", "false"]).optional() }),
      body: eventBodySchema,
      ok: { status: 200, schema: dispatchAnswerSchema },
      extra: { 429: "QUOTA_EXCEEDED", 503: "STORE_UNAVAILABLE" },
    },
    {
      method: "post",
      path: "/v1/agents/{agent}/events",
      who: "tenant",
      summary: "An agent CLI's HTTP hook: its payload in, its own answer out (docs/ADAPTERS.md)",
      params: { agent: z.enum(AGENTS) },
      query: z.object({
        event: z.string().optional(),
        form: z.enum(["http", "command"]).optional().openapi({
          description:
            "command: answer {exit_code, stdout, stderr}, what the command form prints " +
            "(used by `hookbox dispatch --agent NAME --remote URL`)",
        }),
      }),
      body: z.record(z.string(), z.unknown()).openapi("AgentPayload"),
      ok: { status: 200, schema: z.record(z.string(), z.unknown()).openapi("AgentAnswer") },
      extra: { 404: "AGENT_UNKNOWN", 429: "QUOTA_EXCEEDED", 503: "STORE_UNAVAILABLE" },
    },
    {
      method: "get",
      path: "/v1/audit",
      who: "tenant",
      summary:
        "Audit items, newest first; a page may hold fewer than `limit` (a filter looks at 5,000 rows, a page carries 4 MiB) and then has a next_cursor",
      query: auditQuerySchema,
      ok: { status: 200, schema: auditPageSchema },
    },
    {
      method: "post",
      path: "/v1/audit/ingest",
      who: "admin",
      summary: "Store audit items posted by edge Workers (idempotent by decision_id)",
      body: auditIngestSchema,
      ok: { status: 200, schema: auditIngestAnswerSchema },
      extra: { 503: "STORE_UNAVAILABLE" },
    },
    {
      method: "get",
      path: "/metrics",
      who: "admin",
      summary: "Prometheus metrics",
      ok: { status: 200, text: true },
    },
    {
      method: "get",
      path: "/healthz",
      who: "anyone",
      summary: "Liveness and store reachability",
      ok: { status: 200, schema: z.object({ status: z.string(), store: z.string() }) },
      extra: { 503: "STORE_UNAVAILABLE, or SHUTTING_DOWN while the server drains" },
    },
    {
      method: "get",
      path: "/openapi.json",
      who: "anyone",
      summary: "This document",
      ok: { status: 200, schema: z.record(z.string(), z.unknown()) },
    },
  ];
}

/** The OpenAPI 3.1 document of the service. */
export function openApiDocument(): Record<string, unknown> {
  const { errorSchema } = serverSchemas();
  const ERRORS = {
    400: {
      description: "bad request: JSON_INVALID, REQUEST_INVALID, EVENT_INVALID",
      ...json(errorSchema),
    },
    401: { description: "UNAUTHENTICATED", ...json(errorSchema) },
    403: { description: "FORBIDDEN", ...json(errorSchema) },
    404: { description: "not found", ...json(errorSchema) },
    408: { description: "BODY_TOO_SLOW: the body did not arrive in time", ...json(errorSchema) },
    413: { description: "BODY_TOO_LARGE", ...json(errorSchema) },
  };
  const doc = new OpenAPIHono();
  doc.openAPIRegistry.registerComponent("securitySchemes", "bearer", {
    type: "http",
    scheme: "bearer",
  });
  for (const r of routeSpecs()) {
    const responses: Record<number, unknown> = {
      [r.ok.status]: r.ok.schema
        ? { description: "success", ...json(r.ok.schema) }
        : r.ok.text
        ? { description: "success", content: { "text/plain": { schema: z.string() } } }
        : { description: "success, no body" },
    };
    if (r.who !== "anyone") Object.assign(responses, ERRORS);
    // Any route may answer 503 (the store unreachable, the server draining), with Retry-After.
    responses[503] = {
      description: "STORE_UNAVAILABLE or SHUTTING_DOWN; Retry-After says when to try again",
      ...json(errorSchema),
    };
    for (const [status, code] of Object.entries(r.extra ?? {})) {
      responses[Number(status)] = { description: code, ...json(errorSchema) };
    }
    const content: Record<string, { schema: z.ZodType }> = {};
    if (r.body) content["application/json"] = { schema: r.body };
    if (r.gzip) content["application/gzip"] = { schema: z.string().meta({ format: "binary" }) };
    const route = createRoute({
      method: r.method,
      path: r.path,
      summary: r.summary,
      description: `Who: ${r.who}.`,
      ...(r.who === "anyone" ? {} : { security: [{ bearer: [] }] }),
      request: {
        ...(r.params ? { params: z.object(r.params) } : {}),
        ...(r.query ? { query: r.query } : {}),
        ...(r.body ? { body: { content, required: true } } : {}),
      },
      responses: responses as never,
    });
    doc.openAPIRegistry.registerPath(route);
  }
  return doc.getOpenAPI31Document({
    openapi: "3.1.0",
    info: {
      title: "hookbox",
      version: "1",
      description: "Multi-tenant sandboxed agent hooks (SPEC §6).",
    },
  }) as unknown as Record<string, unknown>;
}
