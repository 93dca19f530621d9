/**
 * The decision log as a webhook (`serve --decision-log https://…`): entries
 * are posted in batches as JSON lines (`application/x-ndjson`), one request
 * at a time, retried with backoff while the collector fails; past a bounded
 * queue the oldest entries are dropped, counted and said once per episode.
 * The answer to an event never waits for the collector.
 *
 * @module
 */

/** Options of {@linkcode decisionWebhook}. */
export interface DecisionWebhookOptions {
  /** Sent as `Authorization: Bearer …` when given. */
  token?: string | undefined;
  /** Entries per request. @default 200 */
  batch?: number;
  /** Longest an entry waits for its batch to fill, ms. @default 1000 */
  flushMs?: number;
  /** Entries kept while the collector does not take them; past it the oldest go. @default 10000 */
  queue?: number;
  /** Longest one request may take, ms. @default 10000 */
  requestMs?: number;
  /** First wait after a failed request, doubled up to 30 s. @default 1000 */
  retryMs?: number;
  /** Says what went wrong (a failed request, dropped entries): one line each time. */
  report(message: string): void;
}

/** The sink: `write` queues an entry; `close` sends what it can within `ms`. */
export interface DecisionWebhook {
  write(entry: Record<string, unknown>): void;
  /** Entries dropped so far because the queue was full. */
  readonly dropped: number;
  close(ms?: number): Promise<void>;
}

const MAX_RETRY_MS = 30_000;

/** A decision-log sink posting to `url`. */
export function decisionWebhook(url: string, options: DecisionWebhookOptions): DecisionWebhook {
  const batch = options.batch ?? 200;
  const flushMs = options.flushMs ?? 1000;
  const cap = options.queue ?? 10_000;
  const requestMs = options.requestMs ?? 10_000;
  const firstRetry = options.retryMs ?? 1000;
  const queue: string[] = [];
  let dropped = 0;
  let droppedSaid = 0;
  let sending: Promise<void> | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let retryMs = firstRetry;
  let closed = false;

  const headers: Record<string, string> = { "content-type": "application/x-ndjson" };
  if (options.token) headers.authorization = `Bearer ${options.token}`;

  const post = async (lines: string[]): Promise<void> => {
    const res = await fetch(url, {
      method: "POST",
      headers,
      body: lines.join("\n") + "\n",
      signal: AbortSignal.timeout(requestMs),
    });
    await res.body?.cancel();
    if (!res.ok) throw new Error(`the collector answered ${res.status}`);
  };

  const sayDropped = () => {
    if (dropped === droppedSaid) return;
    options.report(
      `${dropped - droppedSaid} entries dropped: ${cap} were waiting for ${url} already`,
    );
    droppedSaid = dropped;
  };

  const schedule = (ms: number) => {
    if (timer !== null || closed) return;
    timer = setTimeout(() => {
      timer = null;
      send();
    }, ms);
  };

  const send = () => {
    if (sending !== null || queue.length === 0) return;
    const lines = queue.slice(0, batch);
    let ok = false;
    sending = post(lines).then(
      () => {
        ok = true;
        queue.splice(0, lines.length);
        retryMs = firstRetry;
        sayDropped();
      },
      (err) => {
        options.report(`${url}: ${err instanceof Error ? err.message : String(err)}; retrying`);
        sayDropped();
        schedule(retryMs);
        retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
      },
    ).finally(() => {
      sending = null;
      // After a failure the retry is already scheduled (backoff); after a success, go on.
      if (!ok) return;
      if (queue.length >= batch) send();
      else if (queue.length > 0) schedule(flushMs);
    });
  };

  return {
    get dropped() {
      return dropped;
    },
    write(entry) {
      if (closed) return;
      queue.push(JSON.stringify(entry));
      if (queue.length > cap) {
        // The oldest not being sent go first (a batch in flight keeps its entries).
        queue.splice(sending === null ? 0 : Math.min(batch, queue.length - 1), 1);
        dropped++;
      }
      if (queue.length >= batch) send();
      else schedule(flushMs);
    },
    async close(ms = 5000) {
      closed = true;
      if (timer !== null) clearTimeout(timer);
      timer = null;
      const until = Date.now() + ms;
      const pause = (ms: number) =>
        new Promise((resolve) =>
          setTimeout(resolve, Math.max(0, Math.min(ms, until - Date.now())))
        );
      while (queue.length > 0 && Date.now() < until) {
        if (sending === null) send();
        const current = sending as Promise<void> | null;
        if (current === null) break;
        const before = queue.length;
        let waiting: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([
          current,
          new Promise((resolve) => waiting = setTimeout(resolve, Math.max(0, until - Date.now()))),
        ]);
        clearTimeout(waiting);
        // It failed: a short pause before the next try while time is left.
        if (queue.length === before) await pause(200);
      }
      sayDropped();
      if (queue.length > 0) {
        options.report(`${queue.length} entries not delivered to ${url} at shutdown`);
      }
    },
  };
}
