/**
 * The embedded store (`sqlite.ts`): captured events and shadow runs
 * (docs/replay.md).
 *
 * @module
 */
import { MAX_SHADOW_DISAGREEMENTS, type ReplayMethods } from "../store/store.ts";
import { decodeCursor } from "../store/cursor.ts";
import { capturePage, pageBySize, type Row, shadowReport, shadowState } from "../store/rows.ts";
import { nextTurn, PRUNE_WINDOW, type SqliteContext } from "./_sqlite_context.ts";

/** The store's methods for captured events and shadows. */
export function replayMethods(
  c: SqliteContext,
): ReplayMethods {
  const { q, tx, readRows, bump } = c;
  return {
    async readCaptures(query) {
      const after = query.cursor === undefined ? 0 : decodeCursor(query.cursor);
      const sized = await readRows(
        `SELECT seq, octet_length(event) AS size FROM captures
           WHERE tenant_id = ? AND seq > ? AND at >= ? ORDER BY seq LIMIT ?`,
        [query.tenant_id, after, query.since ?? "", query.limit + 1],
      );
      const fit = pageBySize(sized, query.limit, query.bytes);
      const rows = fit.seqs.length === 0 ? [] : await readRows(
        `SELECT * FROM captures WHERE tenant_id = ? AND seq IN (${
          fit.seqs.map(() => "?").join(", ")
        }) ORDER BY seq`,
        [query.tenant_id, ...fit.seqs],
      );
      return capturePage(rows, query.limit, fit.more);
    },
    async pruneCaptures(tenantId, before) {
      // A window at a time, as the audit's retention does (never one long DELETE).
      let removed = 0;
      for (;;) {
        const r = q(`DELETE FROM captures WHERE seq IN (SELECT seq FROM captures
          WHERE tenant_id = ? AND at < ? ORDER BY seq LIMIT ${PRUNE_WINDOW})`).run(
          tenantId,
          before,
        );
        removed += Number(r.changes);
        if (Number(r.changes) < PRUNE_WINDOW) return removed;
        await nextTurn();
      }
    },
    setShadow(tenantId, name, version, at) {
      return Promise.resolve(tx(() => {
        const hook = q("SELECT 1 AS one FROM hooks WHERE tenant_id = ? AND name = ?")
          .get(tenantId, name);
        if (hook === undefined) return false;
        if (
          version !== null &&
          q("SELECT 1 AS one FROM hook_versions WHERE tenant_id = ? AND name = ? AND version = ?")
              .get(tenantId, name, version) === undefined
        ) return false;
        q("DELETE FROM shadows WHERE tenant_id = ? AND name = ?").run(tenantId, name);
        q("DELETE FROM shadow_runs WHERE tenant_id = ? AND name = ?").run(tenantId, name);
        if (version !== null) {
          q("INSERT INTO shadows (tenant_id, name, version, started_at) VALUES (?, ?, ?, ?)")
            .run(tenantId, name, version, at);
        }
        bump();
        return true;
      }));
    },
    listShadows(tenantId) {
      return Promise.resolve(
        q("SELECT name, version, started_at FROM shadows WHERE tenant_id = ? ORDER BY name")
          .all(tenantId).map((r) => shadowState(r as Row)),
      );
    },
    appendShadowRuns(rows) {
      if (rows.length === 0) return Promise.resolve();
      tx(() => {
        // Counted on the shadow's row; a disagreement is kept while the shadow has room.
        const shadow = q(
          "SELECT kept FROM shadows WHERE tenant_id = ? AND name = ? AND version = ?",
        );
        const count = q(`UPDATE shadows SET runs = runs + 1, agreed = agreed + ?, kept = kept + ?
          WHERE tenant_id = ? AND name = ? AND version = ?`);
        const insert = q(`INSERT INTO shadow_runs (tenant_id, name, version, decision_id, at,
          agreed, differs) VALUES (?, ?, ?, ?, ?, 0, ?)`);
        for (const r of rows) {
          const found = shadow.get(r.tenant_id, r.name, r.version) as Row | undefined;
          if (found === undefined) continue; // stopped or replaced since the run began
          const keep = !r.agreed && Number(found.kept) < MAX_SHADOW_DISAGREEMENTS;
          count.run(r.agreed ? 1 : 0, keep ? 1 : 0, r.tenant_id, r.name, r.version);
          if (!keep) continue;
          insert.run(
            r.tenant_id,
            r.name,
            r.version,
            r.decision_id,
            r.at,
            r.differs === null ? null : JSON.stringify(r.differs),
          );
        }
      });
      return Promise.resolve();
    },
    async readShadow(tenantId, name, page) {
      const [state] = await readRows(
        "SELECT * FROM shadows WHERE tenant_id = ? AND name = ?",
        [tenantId, name],
      );
      const below = page.cursor === undefined ? Number.MAX_SAFE_INTEGER : decodeCursor(page.cursor);
      const rows = await readRows(
        `SELECT seq, version, decision_id, at, differs FROM shadow_runs
           WHERE tenant_id = ? AND name = ? AND agreed = 0 AND seq < ? ORDER BY seq DESC LIMIT ?`,
        [tenantId, name, below, page.limit + 1],
      );
      return shadowReport(
        state,
        rows,
        page.limit,
        (d) => d === null ? null : JSON.parse(String(d)),
      );
    },
  };
}
