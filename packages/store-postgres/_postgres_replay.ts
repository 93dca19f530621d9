/**
 * The PostgreSQL store (`postgres.ts`): captured events and shadow runs
 * (docs/replay.md).
 *
 * @module
 */
import type postgres from "postgres";
import { MAX_SHADOW_DISAGREEMENTS, type ReplayMethods } from "../store/store.ts";
import { decodeCursor } from "../store/cursor.ts";
import { capturePage, pageBySize, shadowReport, shadowState } from "../store/rows.ts";
import type { PgContext } from "./_postgres_context.ts";

/** Rows deleted by one statement of a retention sweep. */
const PRUNE_WINDOW = 1000;

/** The store's methods for captured events and shadows. */
export function replayMethods(c: PgContext): ReplayMethods {
  // Captured events and shadow reports are read on the audit-read pool: a replay's reads never
  // wait for, or hold up, the connections that answer events.
  const { sql, reads, bump } = c;
  return {
    async readCaptures(query) {
      const after = query.cursor === undefined ? 0 : decodeCursor(query.cursor);
      const sized = await reads`SELECT seq, octet_length(event) AS size FROM captures
        WHERE tenant_id = ${query.tenant_id} AND seq > ${after} AND at >= ${query.since ?? ""}
        ORDER BY seq LIMIT ${query.limit + 1}`;
      const fit = pageBySize(sized, query.limit, query.bytes);
      const rows = fit.seqs.length === 0 ? [] : await reads`SELECT * FROM captures
        WHERE tenant_id = ${query.tenant_id} AND seq = ANY(${fit.seqs}) ORDER BY seq`;
      return capturePage(rows, query.limit, fit.more);
    },
    async pruneCaptures(tenantId, before) {
      let removed = 0;
      for (;;) {
        const r = await sql`DELETE FROM captures WHERE seq IN (SELECT seq FROM captures
          WHERE tenant_id = ${tenantId} AND at < ${before} ORDER BY seq LIMIT ${PRUNE_WINDOW})`;
        removed += r.count;
        if (r.count < PRUNE_WINDOW) return removed;
      }
    },
    setShadow(tenantId, name, version, at) {
      return sql.begin(async (tx) => {
        const [hook] = await tx`SELECT 1 AS one FROM hooks
          WHERE tenant_id = ${tenantId} AND name = ${name} FOR UPDATE`;
        if (hook === undefined) return false;
        if (version !== null) {
          const [found] = await tx`SELECT 1 AS one FROM hook_versions
            WHERE tenant_id = ${tenantId} AND name = ${name} AND version = ${version}`;
          if (found === undefined) return false;
        }
        await tx`DELETE FROM shadows WHERE tenant_id = ${tenantId} AND name = ${name}`;
        await tx`DELETE FROM shadow_runs WHERE tenant_id = ${tenantId} AND name = ${name}`;
        if (version !== null) {
          await tx`INSERT INTO shadows (tenant_id, name, version, started_at)
            VALUES (${tenantId}, ${name}, ${version}, ${at})`;
        }
        await bump(tx);
        return true;
      });
    },
    async listShadows(tenantId) {
      const rows = await sql`SELECT name, version, started_at FROM shadows
        WHERE tenant_id = ${tenantId} ORDER BY name`;
      return rows.map(shadowState);
    },
    async appendShadowRuns(rows) {
      for (const r of rows) {
        // Counted on the shadow's row; a disagreement is kept while the shadow has room.
        await sql.begin(async (tx) => {
          const [found] = await tx`SELECT kept FROM shadows WHERE tenant_id = ${r.tenant_id}
            AND name = ${r.name} AND version = ${r.version} FOR UPDATE`;
          if (found === undefined) return; // stopped or replaced since the run began
          const keep = !r.agreed && Number(found.kept) < MAX_SHADOW_DISAGREEMENTS;
          await tx`UPDATE shadows SET runs = runs + 1, agreed = agreed + ${r.agreed ? 1 : 0},
            kept = kept + ${keep ? 1 : 0} WHERE tenant_id = ${r.tenant_id} AND name = ${r.name}
            AND version = ${r.version}`;
          if (!keep) return;
          const differs = r.differs === null
            ? null
            : tx.json(r.differs as unknown as postgres.JSONValue);
          await tx`INSERT INTO shadow_runs (tenant_id, name, version, decision_id, at, agreed,
            differs) VALUES (${r.tenant_id}, ${r.name}, ${r.version}, ${r.decision_id}, ${r.at},
            false, ${differs})`;
        });
      }
    },
    async readShadow(tenantId, name, page) {
      const [state] = await reads`SELECT * FROM shadows
        WHERE tenant_id = ${tenantId} AND name = ${name}`;
      const below = page.cursor === undefined ? Number.MAX_SAFE_INTEGER : decodeCursor(page.cursor);
      const rows = await reads`SELECT seq, version, decision_id, at, differs FROM shadow_runs
        WHERE tenant_id = ${tenantId} AND name = ${name} AND NOT agreed AND seq < ${below}
        ORDER BY seq DESC LIMIT ${page.limit + 1}`;
      return shadowReport(
        state,
        rows,
        page.limit,
        (d) => (d ?? null) as Record<string, unknown> | null,
      );
    },
  };
}
