/**
 * Audit delivery from an edge Worker to the §6 service (`hookbox bundle
 * --audit-url`): rows queue in the isolate and are posted in batches to the
 * admin-keyed `POST /v1/audit/ingest`, after the answer (`ctx.waitUntil`).
 * Rows a post could not deliver stay queued and go with the next one; the
 * route skips decision ids it already has, so a resent batch is stored once.
 * The queue is bounded: past {@linkcode AuditPosterOptions.maxQueued} the
 * oldest rows are written to the log as `{"audit": row, "undelivered": why}`
 * lines rather than dropped.
 *
 * @module
 */
import type { AuditRow } from "../store/store.ts";

/** Options of {@linkcode createAuditPoster}. */
export interface AuditPosterOptions {
  /** The service's ingest URL, e.g. `https://hooks.example.com/v1/audit/ingest`. */
  url: string;
  /** The admin key of that service. */
  key: string;
  /** How to post (a service binding's `fetch`, or the global one). @default fetch */
  fetch?: (request: Request) => Promise<Response>;
  /** Rows per post. @default 500 */
  batch?: number;
  /** Rows kept for a later post while the service cannot be reached. @default 10000 */
  maxQueued?: number;
  /** Where undelivered rows and delivery errors go. @default console.log */
  log?: (line: string) => void;
}

/** A queue of audit rows posted in batches. */
export interface AuditPoster {
  /** Queues rows (synchronous: the answer never waits for the post). */
  push(rows: AuditRow[]): void;
  /** Posts everything queued, batch by batch; resolves when done or a post failed. */
  drain(): Promise<void>;
  /** Rows waiting. */
  readonly queued: number;
}

/** Builds an {@linkcode AuditPoster}. */
export function createAuditPoster(options: AuditPosterOptions): AuditPoster {
  const post = options.fetch ?? ((r: Request) => fetch(r));
  const batch = options.batch ?? 500;
  const maxQueued = options.maxQueued ?? 10_000;
  const log = options.log ?? ((line: string) => console.log(line));
  const queue: AuditRow[] = [];
  let running: Promise<void> | null = null;

  const spill = (rows: AuditRow[], why: string) => {
    for (const row of rows) log(JSON.stringify({ audit: row, undelivered: why }));
  };
  const run = async () => {
    while (queue.length > 0) {
      const rows = queue.slice(0, batch);
      let failure: string | null = null;
      try {
        const res = await post(
          new Request(options.url, {
            method: "POST",
            headers: {
              authorization: `Bearer ${options.key}`,
              "content-type": "application/json",
            },
            body: JSON.stringify({ items: rows }),
          }),
        );
        if (!res.ok) failure = `HTTP ${res.status}: ${(await res.text()).slice(0, 200)}`;
        else await res.body?.cancel();
      } catch (err) {
        failure = String(err);
      }
      if (failure !== null) {
        log(JSON.stringify({ audit_post_failed: failure, queued: queue.length }));
        // A malformed batch would fail forever: log it instead of retrying it.
        if (failure.startsWith("HTTP 400") || failure.startsWith("HTTP 413")) {
          spill(queue.splice(0, rows.length), failure);
          continue;
        }
        return;
      }
      queue.splice(0, rows.length);
    }
  };
  return {
    push(rows) {
      queue.push(...rows);
      if (queue.length > maxQueued) {
        spill(queue.splice(0, queue.length - maxQueued), `over ${maxQueued} queued rows`);
      }
    },
    async drain() {
      while (running !== null) await running;
      if (queue.length === 0) return;
      running = run();
      try {
        await running;
      } finally {
        running = null;
      }
    },
    get queued() {
      return queue.length;
    },
  };
}
