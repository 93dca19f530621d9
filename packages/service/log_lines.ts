/**
 * Request lines of client errors (`4xx`) and of `503`s, bounded per tenant. A tenant's
 * refusals cost the server next to nothing and come as fast as it sends them
 * (27,000 a second measured, one `429` line each): the log queue filled with
 * one tenant's lines, and every other tenant's lines past it, errors
 * included, were dropped. Each tenant (and requests with no tenant, such as
 * a wrong key, together) gets {@linkcode CLIENT_ERROR_LINES} request lines of
 * client errors a second; past them its lines are counted, and one
 * `requests not logged` line a second says how many, with their statuses.
 * Other answers (`500` included) are always logged, and the request metrics
 * count every request.
 *
 * @module
 */

/**
 * The answers whose request lines are bounded: client errors, and `503`
 * (the store, the process's descriptors or its shutdown: the same line again
 * and again while it lasts). A `500` is always written.
 */
const BOUNDED = (status: number) => (status >= 400 && status < 500) || status === 503;

/** Request lines of client errors each tenant gets a second. */
export const CLIENT_ERROR_LINES = 20;
/** Length of one window, ms. */
const WINDOW_MS = 1000;
/** Tenants tracked in one window; the rest share one count. */
const MAX_SOURCES = 1000;
/** The shared count's name. */
const OTHERS = "_others";

interface Source {
  lines: number;
  skipped: number;
  statuses: Map<number, number>;
}

/** The bound on client-error lines (see the module doc). */
export class ClientErrorLines {
  readonly #log: (entry: Record<string, unknown>) => void;
  readonly #iso: () => string;
  #start = -Infinity;
  #sources = new Map<string, Source>();

  constructor(log: (entry: Record<string, unknown>) => void, iso: () => string) {
    this.#log = log;
    this.#iso = iso;
  }

  /**
   * Whether the request line of a `status` answer for `tenant` ("" when no
   * tenant is known) is written, at `now` (ms); one that is not is counted.
   */
  admit(tenant: string, status: number, now: number): boolean {
    this.flush(now);
    if (!BOUNDED(status)) return true;
    let source = this.#sources.get(tenant);
    if (source === undefined) {
      const key = this.#sources.size < MAX_SOURCES ? tenant : OTHERS;
      source = this.#sources.get(key);
      if (source === undefined) {
        source = { lines: 0, skipped: 0, statuses: new Map() };
        this.#sources.set(key, source);
      }
    }
    if (source.lines < CLIENT_ERROR_LINES) {
      source.lines++;
      return true;
    }
    source.skipped++;
    source.statuses.set(status, (source.statuses.get(status) ?? 0) + 1);
    return false;
  }

  /**
   * Once a window has ended at `now` (or at once, `force`: a server shutting
   * down), writes one `requests not logged` line for each tenant whose lines
   * were held back in it, and starts the next window.
   */
  flush(now: number, force = false): void {
    if (!force && now - this.#start < WINDOW_MS) return;
    for (const [tenant, source] of this.#sources) {
      if (source.skipped === 0) continue;
      this.#log({
        at: this.#iso(),
        level: "info",
        msg: "requests not logged",
        ...(tenant === "" ? {} : { tenant }),
        count: source.skipped,
        statuses: Object.fromEntries(source.statuses),
        since_ms: Math.max(0, Math.round(now - this.#start)),
      });
    }
    this.#sources.clear();
    this.#start = now;
  }
}
