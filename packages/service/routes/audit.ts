/**
 * The audit log: a tenant's pages (`GET /v1/audit`) and the rows edge
 * Workers post (`POST /v1/audit/ingest`, admin key).
 *
 * @module
 */
import type { Context } from "hono";
import { isHookboxError } from "../../core/errors.ts";
import type { Store } from "../../store/store.ts";
import { ApiError, storeUnavailable } from "../errors.ts";
import { MAX_INGEST_BODY, readJson, stripUndefined, validate } from "../request.ts";
import { serverSchemas } from "../schemas.ts";
import type { HeldBytes } from "../held_bytes.ts";
import type { ServiceContext } from "./context.ts";
import type { Route } from "./route.ts";
import { AUDIT_PAGE_BYTES, AUDIT_SCAN_ROWS } from "../audit_limits.ts";

/** One page of `tenantId`'s audit (null: every tenant's), filtered by the request's query. */
export async function auditPage(
  store: Store,
  c: Context,
  tenantId: string | null,
  held: HeldBytes | null = null,
): Promise<Response> {
  const query = validate(serverSchemas().auditQuerySchema, c.req.query());
  // Rows hold UTC instants as ISO text: `since` is compared as an instant, whatever its offset.
  if (query.since !== undefined) query.since = new Date(query.since).toISOString();
  try {
    const page = await store.readAudit({
      tenant_id: tenantId,
      ...stripUndefined(query),
      scan: AUDIT_SCAN_ROWS,
      bytes: AUDIT_PAGE_BYTES,
    });
    // A tenant's page is counted while its client leaves it unread; the admin's is not.
    return tenantId !== null && held !== null ? held.value(c, tenantId, page) : c.json(page);
  } catch (err) {
    if (isHookboxError(err, "CURSOR_INVALID")) {
      throw new ApiError(400, "CURSOR_INVALID", err.message, { field: "cursor" });
    }
    throw err;
  }
}

/** The routes of `/v1/audit`. */
export function auditRoutes({ store, iso, log, held }: ServiceContext): Route[] {
  return [
    {
      method: "get",
      path: "/v1/audit",
      who: "tenant",
      docs: (s) => ({
        summary:
          "Audit items, newest first; a page may hold fewer than `limit` (a filter looks at 5,000 rows, a page carries 4 MiB) and then has a next_cursor",
        query: s.auditQuerySchema,
        ok: { status: 200, schema: s.auditPageSchema },
      }),
      handler: (c, { tenant }) => auditPage(store, c, tenant.id, held),
    },
    {
      method: "get",
      path: "/v1/audit/all",
      who: "admin",
      docs: (s) => ({
        summary:
          "Every tenant's audit items, newest first, each with its tenant_id (the same filters and pages as /v1/audit)",
        query: s.auditQuerySchema,
        ok: { status: 200, schema: s.auditAllPageSchema },
      }),
      handler: (c) => auditPage(store, c, null),
    },
    {
      method: "post",
      path: "/v1/audit/ingest",
      who: "admin",
      docs: (s) => ({
        summary: "Store audit items posted by edge Workers (idempotent by decision_id)",
        body: s.auditIngestSchema,
        ok: { status: 200, schema: s.auditIngestAnswerSchema },
        extra: { 503: "STORE_UNAVAILABLE" },
      }),
      // Audit items of edge Workers (`hookbox bundle --audit-url`), stored as the service's own.
      handler: async (c) => {
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
      },
    },
  ];
}
