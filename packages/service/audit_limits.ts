/**
 * How much one audit page may look at and carry (`GET /v1/audit`), apart
 * from the audit routes so that the service's exports do not load them (an
 * edge Worker leaves those routes out).
 *
 * @module
 */

/**
 * Most audit rows one filtered `GET /v1/audit` looks at. The embedded store
 * reads on the thread that answers every tenant's events, and a filter that
 * matches nothing used to scan every row the tenant had (a hook filter over
 * 300,000 rows held that thread 364 ms); a page now looks at this many rows
 * at most (about 6 ms with a hook filter) and its `next_cursor` goes on from there.
 */
export const AUDIT_SCAN_ROWS = 5000;

/**
 * Most bytes of stored text (hooks, reasons, sessions) one `GET /v1/audit`
 * page carries; past it the page ends early with a `next_cursor`. A tenant
 * with a thousand hooks writes rows of ~190 KB, and a page of a thousand of
 * those held the thread that answers every tenant's events 850 ms (186 MB
 * decoded and encoded); with this bound 27 ms.
 */
export const AUDIT_PAGE_BYTES = 4 * 1024 * 1024;
