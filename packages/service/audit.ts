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
 * @module
 */
import type { AuditRow, Store } from "../store/store.ts";

interface Pending {
  row: AuditRow;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** A row refused because its tenant was deleted (or deleted and made again) since the event came. */
export class TenantGone extends Error {
  override name = "TenantGone";
}

/** Most rows one commit carries. */
const MAX_BATCH = 512;

/** Writes audit rows in group commits. */
export class AuditWriter {
  #queue: Pending[] = [];
  #flushing: Promise<void> | null = null;
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
      this.#queue.push({ row, resolve, reject });
      this.#flushing ??= this.#drain();
    });
  }

  /** Waits until every row written so far is committed (or failed). */
  async flush(): Promise<void> {
    while (this.#flushing) await this.#flushing;
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

  async #drain(): Promise<void> {
    // Let the rows of requests finishing in this turn of the loop join the batch.
    if (this.#expected > 0) await new Promise((resolve) => setTimeout(resolve, 0));
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, MAX_BATCH);
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
      this.#flushing = null;
    }
  }
}

/** Resolves a written row, or rejects it with {@linkcode TenantGone}. */
function settle(p: Pending, gone: ReadonlySet<string>): void {
  if (gone.has(p.row.decision_id)) p.reject(new TenantGone(`tenant ${p.row.tenant_id} is gone`));
  else p.resolve();
}
