/**
 * The PostgreSQL store (`postgres.ts`): the audit log.
 *
 * @module
 */
import type postgres from "postgres";
import type { AuditPage, AuditQuery, AuditRow, Store } from "../store/store.ts";
import { decodeCursor } from "../store/cursor.ts";
import type { PgContext, Tx } from "./_postgres_context.ts";
import { auditPage, pageBySize, type Row, scanBound } from "../store/rows.ts";

/** The store's methods for the audit log. */
export function auditMethods(c: PgContext): Pick<
  Store,
  | "appendAudit"
  | "readAudit"
  | "pruneAudit"
  | "countAudit"
> {
  const { sql, reads } = c;
  return {
    async appendAudit(rows: AuditRow[]) {
      if (rows.length === 0) return [];
      const guarded = rows.filter((a) => a.tenant_created_at !== undefined);
      const captures = rows.some((a) => a.event !== undefined);
      if (guarded.length === 0 && !captures) {
        await insertAudit(sql, rows);
        return [];
      }
      if (!captures) return await guardedInsert(sql, rows);
      return await sql.begin(async (tx) => {
        // The tenants' rows, shared-locked: a deletion waits for this commit, or this sees it.
        const ids = [...new Set(guarded.map((a) => a.tenant_id))];
        const found = await tx`SELECT id, created_at FROM tenants WHERE id = ANY(${ids}) FOR SHARE`;
        const born = new Map(found.map((r) => [String(r.id), String(r.created_at)]));
        const gone = new Set(
          guarded.filter((a) => born.get(a.tenant_id) !== a.tenant_created_at)
            .map((a) => a.decision_id),
        );
        const kept = rows.filter((a) => !gone.has(a.decision_id));
        if (kept.length > 0) await insertAudit(tx, kept);
        return [...gone];
      });
    },
    async readAudit(query: AuditQuery): Promise<AuditPage> {
      // On connections of their own: 32 filtered audit reads at once took every connection of
      // the pool, and another tenant's events waited seconds for one.
      // The rows a page looks at: the tenant's, below the cursor, newest first
      // (its index), at most `scan` of them when a filter is given.
      // One tenant's rows (its index), or every tenant's (the operator's read).
      const own = query.tenant_id === null ? reads`true` : reads`tenant_id = ${query.tenant_id}`;
      const scope = [own];
      if (query.cursor !== undefined) scope.push(reads`seq < ${decodeCursor(query.cursor)}`);
      const conds = [reads`true`];
      if (query.session_id !== undefined) conds.push(reads`session_id = ${query.session_id}`);
      if (query.event_type !== undefined) conds.push(reads`event_type = ${query.event_type}`);
      if (query.decision !== undefined) conds.push(reads`decision = ${query.decision}`);
      if (query.since !== undefined) conds.push(reads`at >= ${query.since}`);
      if (query.hook !== undefined || query.outcome !== undefined) {
        const inner = [reads`true`];
        if (query.hook !== undefined) inner.push(reads`h->>'name' = ${query.hook}`);
        if (query.outcome !== undefined) inner.push(reads`h->>'outcome' = ${query.outcome}`);
        conds.push(
          reads`EXISTS (SELECT 1 FROM jsonb_array_elements(w.hooks) h WHERE ${and(inner, reads)})`,
        );
      }
      const scan = conds.length > 1 ? scanBound(query.scan) : null;
      const bytes = scanBound(query.bytes);
      const candidates = reads`FROM (SELECT * FROM audit WHERE ${and(scope, reads)}
        ORDER BY seq DESC ${scan === null ? reads`` : reads`LIMIT ${scan}`}) AS w
        WHERE ${and(conds, reads)} ORDER BY seq DESC LIMIT ${query.limit + 1}`;
      let rows: Row[];
      let more: boolean;
      // Rows of the page deleted between the two reads (retention) leave no last row to go on
      // from: the page then ends at the last row that fitted.
      let gone: number | null = null;
      if (bytes === null) {
        rows = await reads`SELECT * ${candidates}`;
        more = rows.length > query.limit;
      } else {
        // Sizes first (measured by the database), then only the rows that fit.
        const sized = await reads`SELECT seq, octet_length(hooks::text) +
          COALESCE(octet_length(reason), 0) + octet_length(session_id) AS size ${candidates}`;
        const fit = pageBySize(sized, query.limit, bytes);
        more = fit.more;
        rows = fit.seqs.length === 0 ? [] : await reads`SELECT * FROM audit
          WHERE ${own} AND seq IN ${reads(fit.seqs)} ORDER BY seq DESC`;
        if (rows.length === 0 && fit.seqs.length > 0) [more, gone] = [false, fit.seqs.at(-1)!];
      }
      let scannedTo: number | null = gone;
      if (scannedTo === null && scan !== null && !more) {
        // Stopped at the bound with rows left below it: the next page goes on from there.
        const [seen] = await reads`SELECT COUNT(*) AS n, MIN(seq) AS oldest FROM (SELECT seq
          FROM audit WHERE ${and(scope, reads)} ORDER BY seq DESC LIMIT ${scan}) AS s`;
        if (Number(seen!.n) === scan) scannedTo = Number(seen!.oldest);
      }
      return auditPage(
        rows,
        query.limit,
        (r) => ({
          hooks: r.hooks as AuditRow["hooks"],
          dryRun: r.dry_run as boolean,
        }),
        scannedTo,
        more,
        query.tenant_id === null,
      );
    },
    async pruneAudit(tenantId, before) {
      const r = await sql`DELETE FROM audit WHERE tenant_id = ${tenantId} AND at < ${before}`;
      return r.count;
    },
    async countAudit(tenantId) {
      const [r] = await sql`SELECT COUNT(*) AS n FROM audit WHERE tenant_id = ${tenantId}`;
      return Number(r!.n);
    },
  };
}

/**
 * Inserts audit rows whose tenants must still be the ones their events came
 * to, in one statement (one round trip instead of a transaction's four):
 * the tenants' rows are share-locked, so a deletion waits for this commit or
 * is seen by it; rows whose tenant is gone (or made again) are not stored
 * and their decision ids returned. A batch sent twice is stored once.
 */
async function guardedInsert(q: postgres.Sql, rows: AuditRow[]): Promise<string[]> {
  const data = rows.map((a) => ({ ...columnsOf(a), born: a.tenant_created_at ?? null }));
  const gone = await q`
    WITH rows AS (
      SELECT * FROM jsonb_to_recordset(${q.json(data as unknown as postgres.JSONValue)}) AS r(
        decision_id text, tenant_id text, at text, session_id text, event_type text,
        decision text, reason text, blocked_by text, dry_run boolean, hooks jsonb, born text)
    ), live AS (
      SELECT id, created_at FROM tenants
      WHERE id IN (SELECT tenant_id FROM rows WHERE born IS NOT NULL) FOR SHARE
    ), kept AS (
      SELECT * FROM rows r WHERE r.born IS NULL
        OR EXISTS (SELECT 1 FROM live l WHERE l.id = r.tenant_id AND l.created_at = r.born)
    ), stored AS (
      INSERT INTO audit (decision_id, tenant_id, at, session_id, event_type, decision, reason,
        blocked_by, dry_run, hooks)
      SELECT decision_id, tenant_id, at, session_id, event_type, decision, reason, blocked_by,
        dry_run, hooks FROM kept
      ON CONFLICT (decision_id) DO NOTHING
    )
    SELECT decision_id FROM rows WHERE decision_id NOT IN (SELECT decision_id FROM kept)`;
  return gone.map((r) => String(r.decision_id));
}

/** The columns an audit row stores. */
function columnsOf(a: AuditRow) {
  return {
    decision_id: a.decision_id,
    tenant_id: a.tenant_id,
    at: a.at,
    session_id: a.session_id,
    event_type: a.event_type,
    decision: a.decision,
    reason: a.reason,
    blocked_by: a.blocked_by,
    dry_run: a.dry_run,
    hooks: a.hooks,
  };
}

/** Inserts audit rows (a batch sent twice is stored once). */
async function insertAudit(q: postgres.Sql | Tx, rows: AuditRow[]) {
  const values = rows.map((a) => ({
    ...columnsOf(a),
    hooks: q.json(a.hooks as unknown as postgres.JSONValue),
  }));
  await q`INSERT INTO audit ${
    q(
      values,
      "decision_id",
      "tenant_id",
      "at",
      "session_id",
      "event_type",
      "decision",
      "reason",
      "blocked_by",
      "dry_run",
      "hooks",
    )
  } ON CONFLICT (decision_id) DO NOTHING`;
  const captured = rows.filter((a) => a.event !== undefined).map((a) => ({
    tenant_id: a.tenant_id,
    decision_id: a.decision_id,
    at: a.at,
    event_type: a.event_type,
    event: a.event!,
  }));
  if (captured.length > 0) {
    await q`INSERT INTO captures ${
      q(captured, "tenant_id", "decision_id", "at", "event_type", "event")
    } ON CONFLICT (decision_id) DO NOTHING`;
  }
}

function and(parts: postgres.PendingQuery<postgres.Row[]>[], q: postgres.Sql) {
  return parts.reduce((acc, part) => q`${acc} AND ${part}`);
}
