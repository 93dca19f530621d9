/**
 * The port `hookbox serve` answers on, kept open when accepting fails.
 *
 * Deno's server stops accepting for good when one accept fails: its
 * `finished` rejects, and the process has nothing left to answer on. A
 * process out of file descriptors fails its accepts, and any client can get
 * it there by opening connections and leaving them open (one client's
 * 20,000 connections exhausted the usual limit and ended the process).
 * Connections already open are still served, so the port is served again a
 * moment later (the pause lets the connections that are left close, and
 * bounds the log to a line a second); each failure is logged once.
 *
 * @module
 */

/** Pause before the port is served again after a failed accept, ms. */
export const ACCEPT_RETRY_MS = 1_000;

/** Servers kept for the graceful shutdown: each may still serve connections it accepted. */
const KEPT_SERVERS = 1_000;

/** Options of {@linkcode keepServing}. */
export interface KeepServingOptions {
  port: number;
  hostname: string;
  reusePort: boolean;
  /** Called once, when the port first listens. */
  onListen: (addr: { hostname: string; port: number }) => void;
  log: (entry: Record<string, unknown>) => void;
}

/** A port served until {@linkcode KeptServer.shutdown}. */
export interface KeptServer {
  /** Stops accepting, and resolves once every open request is answered. */
  shutdown(): Promise<void>;
  /** Settles once the server has shut down. */
  finished: Promise<void>;
}

/** Serves `handler` on the port, again after each failed accept (see the module doc). */
export function keepServing(
  options: KeepServingOptions,
  handler: Deno.ServeHandler,
): KeptServer {
  const servers = new Set<Deno.HttpServer>();
  let port = options.port;
  let stopping = false;
  let listened = false;
  let finish: () => void;
  const finished = new Promise<void>((resolve) => finish = resolve);
  let retry: ReturnType<typeof setTimeout> | undefined;
  const later = (error: unknown) => {
    options.log({
      at: new Date().toISOString(),
      level: "error",
      msg: "accept",
      error: `${
        String(error)
      }; accepting again in ${ACCEPT_RETRY_MS} ms (connections already open are still served). If the process is out of file descriptors, raise its limit (ulimit -n) or cap connections per client in a proxy in front`,
    });
    retry = setTimeout(start, ACCEPT_RETRY_MS);
  };
  const start = () => {
    retry = undefined;
    if (stopping) return;
    let server: Deno.HttpServer;
    try {
      server = Deno.serve({
        port,
        hostname: options.hostname,
        ...(options.reusePort ? { reusePort: true } : {}),
        onListen: (addr) => {
          const { hostname, port: bound } = addr as Deno.NetAddr;
          port = bound;
          if (listened) {
            options.log({ at: new Date().toISOString(), level: "info", msg: "accepting", port });
            return;
          }
          listened = true;
          options.onListen({ hostname, port: bound });
        },
      }, handler);
    } catch (err) {
      // Before the first listen, a port that cannot be had is the caller's error.
      if (!listened) throw err;
      return later(err);
    }
    servers.add(server);
    if (servers.size > KEPT_SERVERS) servers.delete(servers.values().next().value!);
    // A server whose accept failed still serves what it accepted: it is kept for the shutdown.
    server.finished.then(
      () => {
        servers.delete(server);
        if (!stopping) later("the server stopped accepting");
      },
      (err) => {
        if (!stopping) later(err);
      },
    );
  };
  start();
  return {
    async shutdown() {
      stopping = true;
      clearTimeout(retry);
      await Promise.allSettled([...servers].map((s) => s.shutdown()));
      finish();
    },
    finished,
  };
}
