/**
 * The audit log writer: "no audit, no answer". Each dispatch waits for its row
 * to be committed. Rows that arrive while a commit is in flight go into the
 * next one together (group commit), so under load one transaction carries
 * many rows. The first row of a batch waits one turn of the event loop (a
 * zero-delay timer, not only a microtask): answers finish in separate tasks
 * (worker messages, sockets), and with a synchronous store a microtask wait
 * would commit them one by one. A failed commit rejects every row in it — their requests answer
 * `503 STORE_UNAVAILABLE` — and nothing acknowledged is ever lost.
 *
 * Rows over 16 KiB (a captured event, a row of a thousand hooks) are committed in
 * a lane of their own, a few at a time, each after a turn of the loop: on
 * PostgreSQL another tenant's small rows commit beside them rather than
 * behind them, and on SQLite (which writes on this thread) answers already
 * settled go out before the next big write.
 *
 * @module
 */
import type { AuditRow, Store } from "../store/store.ts";

interface Pending {
  row: AuditRow;
  /** About how many bytes the row stores ({@linkcode rowBytes}). */
  bytes: number;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** A row refused because its tenant was deleted (or deleted and made again) since the event came. */
export class TenantGone extends Error {
  override name = "TenantGone";
}

/** Most rows one commit carries. */
const MAX_BATCH = 512;
/** About the most bytes one commit carries, unless one row alone is bigger. */
const BATCH_BYTES = 256 * 1024;
/** A row over this goes in the lane of big rows. */
const BIG_ROW = 16 * 1024;

/** About how many bytes `row` stores: its texts, and a little for each field. */
function rowBytes(row: AuditRow): number {
  let bytes = 256 + row.session_id.length + (row.reason?.length ?? 0) + (row.event?.length ?? 0);
  for (const h of row.hooks) bytes += 128 + h.name.length + (h.detail?.length ?? 0);
  return bytes;
}

/** Rows waiting for one lane's commits, and the lane's commit loop while it runs. */
interface Lane {
  queue: Pending[];
  flushing: Promise<void> | null;
  big: boolean;
}

/** Writes audit rows in group commits. */
export class AuditWriter {
  #small: Lane = { queue: [], flushing: null, big: false };
  #big: Lane = { queue: [], flushing: null, big: true };
  #expected = 0;
  /** Rows committed and commits made, for metrics. */
  committed = 0;
  /** Commits made. */
  commits = 0;

  /** A writer on `store`. */
  constructor(private readonly store: Store) {}

  /**
   * Announces a row that is coming (a dispatch under way); call the returned
   * function when it is written or will never be. A commit waits a turn of
   * the loop for other rows only while some are announced: a lone request is
   * committed at once instead of paying the wait for a batch that never comes.
   */
  expect(): () => void {
    this.#expected++;
    let settled = false;
    return () => {
      if (settled) return;
      settled = true;
      this.#expected--;
    };
  }

  /** Resolves once `row` is committed; rejects when the store cannot write it. */
  write(row: AuditRow): Promise<void> {
    return new Promise((resolve, reject) => {
      const bytes = rowBytes(row);
      const lane = bytes > BIG_ROW ? this.#big : this.#small;
      lane.queue.push({ row, bytes, resolve, reject });
      lane.flushing ??= this.#drain(lane);
    });
  }

  /** Waits until every row written so far is committed (or failed). */
  async flush(): Promise<void> {
    while (this.#small.flushing || this.#big.flushing) {
      await Promise.all([this.#small.flushing, this.#big.flushing]);
    }
  }

  /**
   * A batch that failed is written row by row: a row the store refuses fails
   * only its own request, and the rest commit. A store that is down fails
   * them all again (each row once).
   */
  async #oneByOne(batch: Pending[]): Promise<void> {
    for (const p of batch) {
      try {
        const gone = new Set(await this.store.appendAudit([p.row]));
        this.committed += 1 - gone.size;
        this.commits++;
        settle(p, gone);
      } catch (err) {
        p.reject(err);
      }
    }
  }

  async #drain(lane: Lane): Promise<void> {
    // Let the rows of requests finishing in this turn of the loop join the batch.
    if (this.#expected > 0 && !lane.big) await turn();
    try {
      while (lane.queue.length > 0) {
        if (lane.big) await turn();
        const batch = take(lane.queue);
        try {
          const gone = new Set(await this.store.appendAudit(batch.map((p) => p.row)));
          this.committed += batch.length - gone.size;
          this.commits++;
          for (const p of batch) settle(p, gone);
        } catch (err) {
          if (batch.length === 1) batch[0]!.reject(err);
          else await this.#oneByOne(batch);
        }
      }
    } finally {
      lane.flushing = null;
    }
  }
}

/** One turn of the event loop (a zero-delay timer). */
function turn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * The next commit's rows, taken from the front of `queue`: up to
 * {@linkcode MAX_BATCH} rows and about {@linkcode BATCH_BYTES}; at least one.
 */
function take(queue: Pending[]): Pending[] {
  let bytes = 0;
  let n = 0;
  while (
    n < queue.length && n < MAX_BATCH && (n === 0 || bytes + queue[n]!.bytes <= BATCH_BYTES)
  ) bytes += queue[n++]!.bytes;
  return queue.splice(0, n);
}

/** Resolves a written row, or rejects it with {@linkcode TenantGone}. */
function settle(p: Pending, gone: ReadonlySet<string>): void {
  if (gone.has(p.row.decision_id)) p.reject(new TenantGone(`tenant ${p.row.tenant_id} is gone`));
  else p.resolve();
}
