/**
 * A long-running process (`hookbox serve`, its supervisor, the user's daemon)
 * that keeps running past a promise rejected with no handler: Deno ends the
 * process on one, and in the service that would end it for every tenant
 * over one request's fault. Each is one error line instead.
 *
 * @module
 */

/**
 * Makes each unhandled rejection of this process one `log` entry instead of
 * its end (by default a JSON line on stderr).
 */
export function logUnhandledRejections(
  log: (entry: Record<string, unknown>) => void = (entry) => console.error(JSON.stringify(entry)),
): void {
  globalThis.addEventListener("unhandledrejection", (event) => {
    event.preventDefault();
    const reason = event.reason as { stack?: unknown } | undefined;
    log({
      at: new Date().toISOString(),
      level: "error",
      msg: "unhandled rejection",
      error: String(reason?.stack ?? event.reason),
    });
  });
}
