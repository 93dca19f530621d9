/**
 * The embedded store (`sqlite.ts`): the audit log: group-committed rows, size-bounded pages, retention.
 *
 * @module
 */
import type { AuditPage, AuditQuery, AuditRow, Store } from "../store/store.ts";
import { decodeCursor } from "../store/cursor.ts";
import { auditPage, pageBySize, type Row, scanBound } from "../store/rows.ts";
import { nextTurn, PRUNE_WINDOW, type SqliteContext } from "./_sqlite_context.ts";

/** The store's methods for the audit log: group-committed rows, size-bounded pages, retention. */
export function auditMethods(
  c: SqliteContext,
): Pick<Store, "appendAudit" | "readAudit" | "pruneAudit" | "countAudit"> {
  const { q, tx, readRows, checkpoints } = c;
  return {
    appendAudit(rows: AuditRow[]) {
      if (rows.length === 0) return Promise.resolve([]);
      checkpoints?.start();
      const gone: string[] = [];
      tx(() => {
        const insert = q(`INSERT INTO audit (decision_id, tenant_id, at, session_id, event_type,
          decision, reason, blocked_by, dry_run, hooks) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
          ON CONFLICT (decision_id) DO NOTHING`);
        const capture = q(`INSERT INTO captures (tenant_id, decision_id, at, event_type, event)
          VALUES (?, ?, ?, ?, ?) ON CONFLICT (decision_id) DO NOTHING`);
        const born = new Map<string, string | null>();
        const createdAt = (id: string) => {
          if (!born.has(id)) {
            const r = q("SELECT created_at FROM tenants WHERE id = ?").get(id) as Row | undefined;
            born.set(id, r ? String(r.created_at) : null);
          }
          return born.get(id);
        };
        for (const a of rows) {
          if (a.tenant_created_at !== undefined && createdAt(a.tenant_id) !== a.tenant_created_at) {
            gone.push(a.decision_id);
            continue;
          }
          insert.run(
            a.decision_id,
            a.tenant_id,
            a.at,
            a.session_id,
            a.event_type,
            a.decision,
            a.reason,
            a.blocked_by,
            a.dry_run ? 1 : 0,
            JSON.stringify(a.hooks),
          );
          if (a.event !== undefined) {
            capture.run(a.tenant_id, a.decision_id, a.at, a.event_type, a.event);
          }
        }
      });
      return Promise.resolve(gone);
    },
    async readAudit(query: AuditQuery): Promise<AuditPage> {
      // The rows a page looks at: the tenant's, below the cursor, newest first
      // (its index), at most `scan` of them when a filter is given.
      const below = query.cursor === undefined ? null : decodeCursor(query.cursor);
      // One tenant's rows (its index), or every tenant's (the operator's read).
      const own = query.tenant_id === null ? "1 = 1" : "tenant_id = ?";
      const ownArgs = query.tenant_id === null ? [] : [query.tenant_id];
      const windowSql = `SELECT * FROM audit WHERE ${own}${
        below === null ? "" : " AND seq < ?"
      } ORDER BY seq DESC`;
      const windowArgs: (string | number)[] = below === null ? ownArgs : [...ownArgs, below];
      const where: string[] = [];
      const args: (string | number)[] = [];
      const add = (sql: string, value: string | number | undefined) => {
        if (value === undefined) return;
        where.push(sql);
        args.push(value);
      };
      add("session_id = ?", query.session_id);
      add("event_type = ?", query.event_type);
      add("decision = ?", query.decision);
      add("at >= ?", query.since);
      if (query.hook !== undefined || query.outcome !== undefined) {
        const conds = ["1 = 1"];
        if (query.hook !== undefined) {
          conds.push("json_extract(h.value, '$.name') = ?");
          args.push(query.hook);
        }
        if (query.outcome !== undefined) {
          conds.push("json_extract(h.value, '$.outcome') = ?");
          args.push(query.outcome);
        }
        where.push(`EXISTS (SELECT 1 FROM json_each(w.hooks) h WHERE ${conds.join(" AND ")})`);
      }
      const decode = (r: Row) => ({
        hooks: JSON.parse(r.hooks as string),
        dryRun: r.dry_run === 1,
      });
      const scan = where.length > 0 ? scanBound(query.scan) : null;
      const bytes = scanBound(query.bytes);
      const candidates = `FROM (${windowSql}${scan === null ? "" : ` LIMIT ${scan}`}) AS w${
        where.length === 0 ? "" : ` WHERE ${where.join(" AND ")}`
      } ORDER BY seq DESC LIMIT ?`;
      const candidateArgs = [...windowArgs, ...args, query.limit + 1];
      let rows: Row[];
      let more: boolean;
      // Rows of the page deleted between the two reads (retention) leave no last row to go on
      // from: the page then ends at the last row that fitted.
      let gone: number | null = null;
      if (bytes === null) {
        rows = await readRows(`SELECT * ${candidates}`, candidateArgs);
        more = rows.length > query.limit;
      } else {
        // Sizes first (octet_length reads record headers, not the text), then
        // only the rows that fit.
        const sized = await readRows(
          `SELECT seq, octet_length(hooks) + COALESCE(octet_length(reason), 0) +
             octet_length(session_id) AS size ${candidates}`,
          candidateArgs,
        );
        const fit = pageBySize(sized, query.limit, bytes);
        more = fit.more;
        rows = fit.seqs.length === 0 ? [] : await readRows(
          `SELECT * FROM audit WHERE ${own} AND seq IN (${
            fit.seqs.map(() => "?").join(", ")
          }) ORDER BY seq DESC`,
          [...ownArgs, ...fit.seqs],
        );
        if (rows.length === 0 && fit.seqs.length > 0) [more, gone] = [false, fit.seqs.at(-1)!];
      }
      let scannedTo: number | null = gone;
      if (scannedTo === null && scan !== null && !more) {
        // Stopped at the bound with rows left below it: the next page goes on from there.
        const [seen] = await readRows(
          `SELECT COUNT(*) AS n, MIN(seq) AS oldest FROM (SELECT seq FROM audit WHERE ${own}${
            below === null ? "" : " AND seq < ?"
          } ORDER BY seq DESC LIMIT ${scan})`,
          windowArgs,
        );
        if (Number(seen!.n) === scan) scannedTo = Number(seen!.oldest);
      }
      return auditPage(rows, query.limit, decode, scannedTo, more, query.tenant_id === null);
    },
    async pruneAudit(tenantId, before) {
      // Oldest first, a window of rows at a time with a turn of the loop in
      // between, so retention never holds the request thread (one DELETE of a
      // tenant's expired rows scanned all its rows at once); it stops at the
      // first window with nothing past retention (rows are kept in time order,
      // ingested ones nearly so).
      let removed = 0;
      let after = 0;
      for (;;) {
        const window = q(
          `SELECT COUNT(*) AS n, MAX(seq) AS last FROM (SELECT seq FROM audit
             WHERE tenant_id = ? AND seq > ? ORDER BY seq LIMIT ${PRUNE_WINDOW})`,
        ).get(tenantId, after) as Row;
        if (Number(window.n) === 0) return removed;
        const r = q("DELETE FROM audit WHERE tenant_id = ? AND seq > ? AND seq <= ? AND at < ?")
          .run(tenantId, after, Number(window.last), before);
        removed += Number(r.changes);
        if (Number(r.changes) === 0) return removed;
        after = Number(window.last);
        await nextTurn();
      }
    },
    countAudit(tenantId) {
      const r = q("SELECT COUNT(*) AS n FROM audit WHERE tenant_id = ?").get(tenantId) as Row;
      return Promise.resolve(Number(r.n));
    },
  };
}
