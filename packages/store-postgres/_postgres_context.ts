/**
 * What the parts of the PostgreSQL store (`postgres.ts`) share: its two
 * pools, the generation bump, the row readers and the catalog read that
 * every request's key and generation share.
 *
 * @module
 */
import type postgres from "postgres";
import type { HookRow, TenantRow } from "../store/store.ts";
import type { ReadCoalescer } from "../store/coalesce.ts";
import type { Row } from "../store/rows.ts";

/** A transaction of the store's pool. */
export type Tx = postgres.TransactionSql;

/** See the module doc. */
export interface PgContext {
  /** The pool that answers events and every write. */
  sql: postgres.Sql;
  /** The pool of audit reads (tenants' filtered scans), so they queue only behind each other. */
  reads: postgres.Sql;
  /** Bumps the hooks generation in `tx`. */
  bump(tx: Tx): Promise<unknown>;
  /** A hook row from a joined row. */
  hookRow(r: Row): HookRow;
  /** The active hook `name` of the tenant, or null. */
  one(q: postgres.Sql | Tx, tenantId: string, name: string): Promise<HookRow | null>;
  /** A tenant row from a row. */
  tenantRow(r: Row): TenantRow;
  /**
   * Keys' tenants and the hooks generation, read together for the requests
   * of one round: {@linkcode GENERATION} for the generation, `"k:" + hash` for a key.
   */
  catalog: ReadCoalescer<string, TenantRow | number | null>;
}

/** The catalog key of the hooks generation. */
export const GENERATION = "g";
