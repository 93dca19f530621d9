/**
 * Audit delivery from an edge Worker to the §6 service (`hookbox bundle
 * --audit-url`): rows queue in the isolate and are posted in batches to the
 * admin-keyed `POST /v1/audit/ingest`, after the answer (`ctx.waitUntil`).
 * Rows a post could not deliver stay queued and go with the next one; the
 * route skips decision ids it already has, so a resent batch is stored once.
 * The queue is bounded in rows and in bytes: past
 * {@linkcode AuditPosterOptions.maxQueued} rows or
 * {@linkcode AuditPosterOptions.maxQueuedBytes} the oldest rows are written to
 * the log as `{"audit": row, "undelivered": why}` lines rather than dropped;
 * a row that may be on its way to the service is never among them.
 *
 * A Worker's rows are many tenants' rows, so one tenant's rows must not cost
 * the others theirs: a batch is bounded by bytes as well as rows (a tenant
 * with a thousand hooks writes rows of ~190 KB, and 500 of them are far past
 * the route's 8 MiB body); a row too big for the route on its own is logged
 * alone; and a batch the service refuses as malformed is split in halves
 * and each half posted again, so only the rows it refuses are logged.
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
  /**
   * Bytes of JSON per post, at least one row; a row over `maxRowBytes` is
   * logged alone. @default 4 MiB (half the ingest route's 8 MiB body)
   */
  batchBytes?: number;
  /** Bytes of JSON one row may take; the route refuses a body past 8 MiB. @default 8 MiB - 1 KiB */
  maxRowBytes?: number;
  /** Rows kept for a later post while the service cannot be reached. @default 10000 */
  maxQueued?: number;
  /**
   * Bytes of JSON those rows may take together (an isolate's memory holds
   * them; a row can carry a captured event of a megabyte). @default 16 MiB
   */
  maxQueuedBytes?: number;
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

/** Bytes of `text` in UTF-8 (lone surrogates as the 3 bytes of U+FFFD). */
function utf8Bytes(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) bytes += 1;
    else if (c >= 0xd800 && c <= 0xdbff && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 2; // a pair: 4 bytes for 2 units
      i++;
    } else bytes += 2;
  }
  return bytes;
}

/** A queued row: its JSON text and that text's UTF-8 bytes. */
interface Queued {
  text: string;
  bytes: number;
}

/** Builds an {@linkcode AuditPoster}. */
export function createAuditPoster(options: AuditPosterOptions): AuditPoster {
  const post = options.fetch ?? ((r: Request) => fetch(r));
  const batch = options.batch ?? 500;
  const batchBytes = options.batchBytes ?? 4 * 1024 * 1024;
  const maxRowBytes = options.maxRowBytes ?? 8 * 1024 * 1024 - 1024;
  const maxQueued = options.maxQueued ?? 10_000;
  const maxQueuedBytes = options.maxQueuedBytes ?? 16 * 1024 * 1024;
  const log = options.log ?? ((line: string) => console.log(line));
  // Rows waiting, oldest first, as the JSON they are posted as (made once, at push). The rows of
  // the post in flight are out of it, so what overflows is never a row being posted.
  const queue: Queued[] = [];
  let queuedBytes = 0;
  let running: Promise<void> | null = null;

  const spill = (rows: Queued[], why: string) => {
    for (const row of rows) log(`{"audit":${row.text},"undelivered":${JSON.stringify(why)}}`);
  };
  /** Posts rows; null when stored, else why not. */
  const send = async (rows: Queued[]): Promise<string | null> => {
    try {
      const res = await post(
        new Request(options.url, {
          method: "POST",
          headers: {
            authorization: `Bearer ${options.key}`,
            "content-type": "application/json",
          },
          body: `{"items":[${rows.map((r) => r.text).join(",")}]}`,
        }),
      );
      if (!res.ok) return `HTTP ${res.status}: ${(await res.text()).slice(0, 200)}`;
      await res.body?.cancel();
      return null;
    } catch (err) {
      return String(err);
    }
  };
  const malformed = (failure: string) =>
    failure.startsWith("HTTP 400") || failure.startsWith("HTTP 413");
  /**
   * Posts `rows` (taken from the head of the queue); a batch refused as
   * malformed is split in halves until the rows refused are alone, and those
   * are logged. Answers how many of the rows, from the first, are settled
   * (stored or logged); the others go back to the queue (the service could
   * not be reached).
   */
  const deliver = async (rows: Queued[]): Promise<number> => {
    const failure = await send(rows);
    if (failure === null) return rows.length;
    log(JSON.stringify({ audit_post_failed: failure, rows: rows.length, queued: queue.length }));
    if (!malformed(failure)) return 0;
    // A malformed row would fail forever: logged instead of retried; the others are posted.
    if (rows.length === 1) {
      spill(rows, failure);
      return 1;
    }
    const half = Math.ceil(rows.length / 2);
    const first = await deliver(rows.slice(0, half));
    if (first < half) return first;
    return half + await deliver(rows.slice(half));
  };
  const run = async () => {
    while (queue.length > 0) {
      let count = 0;
      let bytes = 0;
      for (const row of queue) {
        if (count === batch || (count > 0 && bytes + row.bytes > batchBytes)) break;
        count++;
        bytes += row.bytes + 1;
      }
      const rows = queue.splice(0, count);
      queuedBytes -= bytes - count;
      const settled = await deliver(rows);
      if (settled < rows.length) {
        // The service went away: the rows not settled wait at the head again, oldest first.
        const back = rows.slice(settled);
        queue.unshift(...back);
        queuedBytes += back.reduce((sum, r) => sum + r.bytes, 0);
        overflow();
        return;
      }
    }
  };
  /** Logs the oldest queued rows past either bound. */
  const overflow = () => {
    let count = 0;
    let bytes = queuedBytes;
    while (count < queue.length && (queue.length - count > maxQueued || bytes > maxQueuedBytes)) {
      bytes -= queue[count++]!.bytes;
    }
    if (count === 0) return;
    queuedBytes = bytes;
    spill(
      queue.splice(0, count),
      queue.length + count > maxQueued
        ? `over ${maxQueued} queued rows`
        : `over ${maxQueuedBytes} bytes of queued rows`,
    );
  };
  return {
    push(rows) {
      for (const row of rows) {
        const text = JSON.stringify(row);
        const bytes = utf8Bytes(text);
        if (bytes > maxRowBytes) {
          // One row past what one post may carry: no post can store it.
          spill(
            [{ text, bytes }],
            `one row of ${bytes} bytes, past the ${maxRowBytes} a post may carry`,
          );
          continue;
        }
        queue.push({ text, bytes });
        queuedBytes += bytes;
      }
      overflow();
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
