/**
 * `GET /openapi.json`: the OpenAPI 3.1 document, generated from the routes'
 * own declarations (`routes/*.ts`) and the zod schemas in `schemas.ts` that
 * also validate the requests.
 *
 * @module
 */
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { eventJsonSchemas } from "../core/schema/event.ts";
import type { Route } from "./routes/route.ts";
import { serverSchemas } from "./schemas.ts";

const json = (schema: z.ZodType) => ({ content: { "application/json": { schema } } });

/** `getHooksName` for `GET /v1/hooks/{name}`: unique, as method and path are. */
export function operationId(method: string, path: string): string {
  const words = path.split("/").filter((w) => w !== "" && w !== "v1")
    .map((w) => w.replace(/[{}]/g, "").split(/[_.-]/))
    .flat()
    .filter((w) => w !== "");
  return method.toLowerCase() + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join("");
}

/** The group a route is listed under: its resource. */
export function tagOf(path: string): string {
  const [, first, second] = path.split("/");
  if (first !== "v1") return "service";
  if (second === "agents") return "events";
  if (second === "platform") return "platform hooks";
  return second ?? "service";
}

/** The OpenAPI 3.1 document of the service. */
export function openApiDocument(routes: readonly Route[]): Record<string, unknown> {
  const schemas = serverSchemas();
  const { errorSchema } = schemas;
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
  for (const declared of routes) {
    const r = { ...declared, ...declared.docs(schemas) };
    const responses: Record<number, unknown> = {
      [r.ok.status]: r.ok.schema
        ? { description: "success", ...json(r.ok.schema) }
        : r.ok.text
        ? { description: "success", content: { "text/plain": { schema: z.string() } } }
        : r.ok.html
        ? { description: "success", content: { "text/html": { schema: z.string() } } }
        : { description: "success, no body" },
    };
    if (r.who !== "anyone") Object.assign(responses, ERRORS);
    // Any route may answer 503 (the store unreachable, the server draining), with Retry-After.
    responses[503] = {
      description:
        "STORE_UNAVAILABLE, SHUTTING_DOWN or OUT_OF_FILES; Retry-After says when to try again",
      ...json(errorSchema),
    };
    // Any tenant route may answer 429 while the tenant's requests hold too much memory.
    if (r.who === "tenant") {
      responses[429] = {
        description: "QUOTA_EXCEEDED: the tenant's requests hold too much (bodies arriving, " +
          "answers unread); Retry-After says when to try again",
        ...json(errorSchema),
      };
    }
    for (const [status, code] of Object.entries(r.extra ?? {})) {
      responses[Number(status)] = { description: code, ...json(errorSchema) };
    }
    const content: Record<string, { schema: z.ZodType }> = {};
    if (r.body) content["application/json"] = { schema: r.body };
    if (r.gzip) content["application/gzip"] = { schema: z.string().meta({ format: "binary" }) };
    const route = createRoute({
      method: r.method,
      path: r.path,
      operationId: operationId(r.method, r.path),
      tags: [tagOf(r.path)],
      summary: r.summary,
      description: `Who: ${r.who === "anyone" ? "anyone (no key)" : `the ${r.who} key`}.`,
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
  const document = doc.getOpenAPI31Document({
    openapi: "3.1.0",
    info: {
      title: "hookbox",
      version: "1",
      description: "Multi-tenant sandboxed agent hooks (SPEC §6).",
    },
  }) as unknown as Record<string, unknown>;
  // The real event union, one schema per event type (the same the events are validated with).
  const components = (document.components ?? {}) as { schemas?: Record<string, unknown> };
  if (components.schemas?.Event !== undefined) {
    components.schemas.Event = {
      oneOf: Object.values(eventJsonSchemas()).map(({ $schema: _, ...schema }) => schema),
      discriminator: { propertyName: "event_type" },
    };
  }
  return document;
}
