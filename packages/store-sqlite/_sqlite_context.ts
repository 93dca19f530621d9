/**
 * What the parts of the embedded store (`sqlite.ts`) share: the connection's
 * cached statements, transactions, the generation counter, long reads and
 * row readers.
 *
 * @module
 */
import type { StatementSync } from "node:sqlite";
import type { HookRow, TenantRow } from "../store/store.ts";
import type { Row } from "../store/rows.ts";

/** The checkpointer thread's client, as the store's parts use it. */
export interface Checkpoints {
  /** Starts the thread (on the first audit write). */
  start(): void;
  /** After a write outside `tx` (a blob's part): what `tx` does after its commits. */
  committed(): void;
  /**
   * Resolves once the thread has copied the log into the file, as far as it
   * could (at once while the thread is not up): a long write waits for it
   * between its steps, so the log never grows past the point where this
   * connection would copy it back itself, on the thread that answers events.
   */
  caughtUp(): Promise<void>;
}

/** See the module doc. */
export interface SqliteContext {
  /** The cached prepared statement of `sql`. */
  q(sql: string): StatementSync;
  /** Runs `fn` in an immediate transaction. */
  tx<T>(fn: () => T): T;
  /** Bumps the hooks generation (in the caller's transaction). */
  bump(): void;
  /** A long read, on the checkpointer thread's connection when it is up. */
  readRows(sql: string, args: (string | number)[]): Promise<Row[]>;
  /** A hook row from a joined row. */
  hookRow(r: Row): HookRow;
  /** The select of active hook rows (`WHERE` to be added). */
  HOOK_SELECT: string;
  /** A tenant row from a row. */
  tenantRow(r: Row): TenantRow;
  /** The active hook `name` of the tenant, or null. */
  one(tenantId: string, name: string): HookRow | null;
  /** The checkpointer thread's client, when there is one. */
  checkpoints: Checkpoints | null;
}

/** Audit rows one step of the retention looks at. */
export const PRUNE_WINDOW = 1000;
/** Blobs one step of the sweep deletes. */
export const SWEEP_STEP = 16;

/**
 * Resolves in a later turn of the event loop, after the I/O that is waiting:
 * the steps of a long delete let requests in between (a timer does; in Deno
 * 2.9 `setImmediate` did not).
 */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));
