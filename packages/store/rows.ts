/**
 * Row mapping shared by the SQLite and PostgreSQL stores: the columns are the
 * same, only how JSON and booleans come back differs (the caller decodes
 * those).
 *
 * @module
 */
import type { Manifest } from "../core/schema/manifest.ts";
import type {
  AuditPage,
  AuditRow,
  CapturePage,
  HookRow,
  ShadowReport,
  ShadowState,
} from "./store.ts";
import { encodeCursor } from "./cursor.ts";

/** A database row. */
export type Row = Record<string, unknown>;

/** A hook row from the joined hooks/hook_versions columns. */
export function hookFromRow(
  r: Row,
  manifest: Manifest,
  enabled: boolean,
  sources: Record<string, string>,
): HookRow {
  return {
    ...headFields(r, enabled),
    runtime: r.runtime as HookRow["runtime"],
    size_bytes: Number(r.size_bytes),
    manifest,
    body: r.body as string,
    built_from: r.built_from as string,
    sources,
    created_at: r.created_at as string,
  };
}

/**
 * A page of audit items from `limit + 1` rows read newest first (`seq`
 * descending): the extra row only says that there is a next page. When the
 * read was bounded and stopped early (`scannedTo`: the oldest `seq` it looked
 * at), the next page goes on below that row.
 */
export function auditPage(
  rows: Row[],
  limit: number,
  decode: (r: Row) => { hooks: AuditRow["hooks"]; dryRun: boolean },
  scannedTo: number | null = null,
  more = rows.length > limit,
  withTenant = false,
): AuditPage {
  const page = rows.slice(0, limit);
  return {
    items: page.map((r) => {
      const { hooks, dryRun } = decode(r);
      return {
        ...(withTenant ? { tenant_id: r.tenant_id as string } : {}),
        decision_id: r.decision_id as string,
        at: r.at as string,
        session_id: r.session_id as string,
        event_type: r.event_type as string,
        decision: r.decision as string,
        reason: (r.reason as string | null) ?? null,
        blocked_by: (r.blocked_by as string | null) ?? null,
        dry_run: dryRun,
        hooks,
      };
    }),
    next_cursor: more
      ? encodeCursor(Number(page.at(-1)!.seq))
      : scannedTo === null
      ? null
      : encodeCursor(scannedTo),
  };
}

/**
 * The rows (by `seq`) of a page that `bytes` allows, from the candidates'
 * sizes newest first (`limit + 1` of them at most): as many as fit, at least
 * one, at most `limit`; `more` when candidates are left after them.
 */
export function pageBySize(
  sized: Row[],
  limit: number,
  bytes: number,
): { seqs: number[]; more: boolean } {
  const seqs: number[] = [];
  let total = 0;
  for (const r of sized) {
    if (seqs.length === limit) break;
    total += Number(r.size);
    if (seqs.length > 0 && total > bytes) break;
    seqs.push(Number(r.seq));
  }
  return { seqs, more: sized.length > seqs.length };
}

/** The fields that name a hook's active version, from a row of either store. */
export function headFields(r: Row, enabled: boolean) {
  return {
    tenant_id: r.tenant_id as string,
    name: r.name as string,
    enabled,
    version: Number(r.version),
    sha256: r.sha256 as string,
  };
}

/** A read's scan bound (`AuditQuery.scan`) as a positive integer, or null for none. */
export function scanBound(scan: number | undefined): number | null {
  return scan !== undefined && Number.isSafeInteger(scan) && scan > 0 ? scan : null;
}

/** A page of captured events from rows of either store, oldest first (`limit + 1` read). */
export function capturePage(rows: Row[], limit: number, more: boolean): CapturePage {
  const page = rows.slice(0, limit);
  return {
    items: page.map((r) => ({
      decision_id: r.decision_id as string,
      at: r.at as string,
      event_type: r.event_type as string,
      event: r.event as string,
      cursor: encodeCursor(Number(r.seq)),
    })),
    next_cursor: more && page.length > 0 ? encodeCursor(Number(page.at(-1)!.seq)) : null,
  };
}

/** A shadow from its row (`shadows`) of either store. */
export function shadowState(r: Row): ShadowState {
  return { name: String(r.name), version: Number(r.version), started_at: String(r.started_at) };
}

/**
 * A shadow report from rows of either store: the shadow's own row (with its
 * counters; undefined when none runs) and a page of its disagreements.
 */
export function shadowReport(
  state: Row | undefined,
  rows: Row[],
  limit: number,
  decode: (differs: unknown) => Record<string, unknown> | null,
): ShadowReport {
  const page = rows.slice(0, limit);
  return {
    shadow: state === undefined ? null : shadowState(state),
    runs: Number(state?.runs ?? 0),
    agreed: Number(state?.agreed ?? 0),
    kept: Number(state?.kept ?? 0),
    disagreements: page.map((r) => ({
      version: Number(r.version),
      decision_id: r.decision_id as string,
      at: r.at as string,
      differs: decode(r.differs),
    })),
    next_cursor: rows.length > limit ? encodeCursor(Number(page.at(-1)!.seq)) : null,
  };
}
