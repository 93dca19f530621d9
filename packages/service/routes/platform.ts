/**
 * The service's own routes: liveness, metrics (admin key) and the OpenAPI
 * document, which is generated from every route's declaration.
 *
 * @module
 */
import { z } from "@hono/zod-openapi";
import { ApiError } from "../errors.ts";
import { openApiDocument } from "../openapi.ts";
import { docsPage } from "../docs_page.ts";
import type { ServiceContext } from "./context.ts";
import type { Route } from "./route.ts";

/** `/healthz`, `/metrics`, `/openapi.json` and `/docs`. */
export function platformRoutes(ctx: ServiceContext): Route[] {
  const { store, audit, metrics } = ctx;
  // Built on first request: generating it costs start-up time nobody may need (edge Workers).
  let openapi: ReturnType<typeof openApiDocument> | null = null;
  return [
    {
      method: "get",
      path: "/healthz",
      who: "anyone",
      docs: () => ({
        summary: "Liveness and store reachability",
        ok: { status: 200, schema: z.object({ status: z.string(), store: z.string() }) },
        extra: { 503: "STORE_UNAVAILABLE, or SHUTTING_DOWN while the server drains" },
      }),
      handler: async (c) => {
        const draining = ctx.draining();
        if (draining !== null) throw draining;
        try {
          await store.ping();
        } catch {
          throw new ApiError(503, "STORE_UNAVAILABLE", "the store cannot be reached");
        }
        return c.json({ status: "ok", store: store.kind });
      },
    },
    {
      method: "get",
      path: "/openapi.json",
      who: "anyone",
      docs: () => ({
        summary: "This document",
        ok: { status: 200, schema: z.record(z.string(), z.unknown()) },
      }),
      handler: (c) => c.json(openapi ??= openApiDocument(ctx.routes())),
    },
    {
      method: "get",
      path: "/docs",
      who: "anyone",
      docs: () => ({ summary: "This document as a page to read", ok: { status: 200, html: true } }),
      handler: (c) => c.html(docsPage(openapi ??= openApiDocument(ctx.routes()))),
    },
    {
      method: "get",
      path: "/metrics",
      who: "admin",
      docs: () => ({ summary: "Prometheus metrics", ok: { status: 200, text: true } }),
      handler: async (c) => {
        metrics.audit(audit.committed, audit.commits);
        return c.text(await metrics.text(), 200, {
          "content-type": "text/plain; version=0.0.4; charset=utf-8",
        });
      },
    },
  ];
}
