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
import { ANYONE } from "../held_bytes.ts";
import type { ServiceContext } from "./context.ts";
import type { Route } from "./route.ts";

const UNREAD_DOCUMENTS =
  "QUOTA_EXCEEDED: unauthenticated clients have left as much of these documents unread as a " +
  "tenant may leave of its answers";

/** `/healthz`, `/metrics`, `/openapi.json` and `/docs`. */
export function platformRoutes(ctx: ServiceContext): Route[] {
  const { store, audit, metrics } = ctx;
  // Built on first request: generating it costs start-up time nobody may need (edge Workers).
  // Kept as bytes: written out for every request, a document of ~76 KB cost the thread that
  // answers events about a third of a millisecond per unauthenticated request.
  let openapi: ReturnType<typeof openApiDocument> | null = null;
  const document = () => openapi ??= openApiDocument(ctx.routes());
  let documentBytes: Uint8Array | null = null;
  let pageBytes: Uint8Array | null = null;
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
        extra: { 429: UNREAD_DOCUMENTS },
      }),
      handler: (c) =>
        ctx.held.json(
          c,
          ANYONE,
          documentBytes ??= new TextEncoder().encode(JSON.stringify(document())),
        ),
    },
    {
      method: "get",
      path: "/docs",
      who: "anyone",
      docs: () => ({
        summary: "This document as a page to read",
        ok: { status: 200, html: true },
        extra: { 429: UNREAD_DOCUMENTS },
      }),
      handler: (c) =>
        ctx.held.json(
          c,
          ANYONE,
          pageBytes ??= new TextEncoder().encode(docsPage(document())),
          "text/html; charset=UTF-8",
        ),
    },
    {
      method: "get",
      path: "/metrics",
      who: "admin",
      docs: () => ({ summary: "Prometheus metrics", ok: { status: 200, text: true } }),
      handler: async (c) => {
        metrics.audit(audit.committed, audit.commits);
        metrics.held(ctx.held.total);
        return c.text(await metrics.text(), 200, {
          "content-type": "text/plain; version=0.0.4; charset=utf-8",
        });
      },
    },
  ];
}
