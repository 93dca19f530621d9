/**
 * Extism HTTP (`http_request`, `http_status_code`) as hookbox serves it.
 * Only a runtime running inside a worker has an {@linkcode HttpTransport}
 * (the main thread does the fetch while the worker blocks); everywhere else
 * `http_request` fails the call. Every request is checked against the hook's
 * HOOK.md `allowed_hosts` (default none) and bounded by the call's deadline
 * and a body cap.
 *
 * @module
 */
import type { ExtismContext, HostFunction } from "../extism/_extism.ts";
import { failure, HALTS } from "../instance/_halt.ts";
import type { GuestHost } from "../_host.ts";
import { hostAllowed, type HttpCall, type HttpReply } from "./_http_wire.ts";

/** Largest response body a plugin can receive, whatever its output cap. */
export const MAX_HTTP_BODY = 1024 * 1024;

/** What one call may reach. */
export interface HttpGrant {
  /** HOOK.md `allowed_hosts`. */
  allowedHosts: readonly string[];
  /** Response body cap in bytes. */
  maxBytes: number;
}

/** The per-call grant, carried next to the `CallSetup`. */
export interface HttpSetup {
  http?: HttpGrant;
}

/** Performs a request synchronously (blocking the worker) within `timeoutMs`. */
export type HttpTransport = (call: HttpCall, maxBytes: number, timeoutMs: number) => HttpReply;

/** HTTP state of one plugin instance: the current call's grant and last status. */
export class HttpSession {
  grant: HttpGrant | null = null;
  status = 0;
  readonly transport: HttpTransport;

  constructor(transport: HttpTransport) {
    this.transport = transport;
  }

  /** Starts a call. */
  begin(setup: HttpSetup): void {
    this.grant = setup.http ?? null;
    this.status = 0;
  }
}

const NO_WORKER = failure("HTTP_FAILED", "HTTP needs worker mode");
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** `http_request` / `http_status_code` for `host`; refusals when `session` is null. */
export function httpFunctions(
  host: GuestHost,
  session: HttpSession | null,
): Record<string, HostFunction> {
  if (session === null) {
    return { http_request: () => host.halt(NO_WORKER), http_status_code: () => 0 };
  }
  return {
    http_request: (ctx, requestAddr: bigint, bodyAddr: bigint) => {
      const call = readCall(host, ctx, requestAddr, bodyAddr);
      const grant = session.grant ?? { allowedHosts: [], maxBytes: 0 };
      const hostname = new URL(call.url).hostname;
      if (!hostAllowed(hostname, grant.allowedHosts)) {
        host.halt(failure("HTTP_DENIED", hostname));
      }
      const remaining = host.deadline - performance.now();
      if (remaining <= 0) host.halt(HALTS.time);
      const reply = session.transport(call, grant.maxBytes, Math.ceil(remaining));
      if (reply.kind === "timeout") host.halt(HALTS.time);
      if (reply.kind === "error") host.halt(failure("HTTP_FAILED", reply.message));
      host.keep(reply.body.length);
      session.status = reply.status;
      // The request blocked this thread: the deadline and the fuel are looked at again.
      host.check(0);
      return ctx.store(reply.body);
    },
    http_status_code: () => session.status,
  };
}

function readCall(host: GuestHost, ctx: ExtismContext, requestAddr: bigint, bodyAddr: bigint) {
  const bad = (why: string) => host.halt(failure("HTTP_FAILED", why));
  const block = ctx.read(requestAddr);
  if (block === null) return bad("invalid request block");
  let parsed: unknown;
  try {
    parsed = JSON.parse(block.string());
  } catch {
    return bad("request is not JSON");
  }
  const { url, method, headers, header } = (parsed ?? {}) as Record<string, unknown>;
  if (typeof url !== "string" || !URL.canParse(url)) return bad("request needs a valid url");
  const protocol = new URL(url).protocol;
  if (protocol !== "http:" && protocol !== "https:") return bad(`scheme ${protocol} not allowed`);
  const verb = typeof method === "string" ? method.toUpperCase() : "GET";
  if (!METHODS.has(verb)) return bad(`method ${verb} not allowed`);
  const call: HttpCall = { url, method: verb, headers: stringMap(headers ?? header), body: null };
  if (bodyAddr !== 0n && verb !== "GET" && verb !== "HEAD") {
    call.body = ctx.read(bodyAddr)?.bytes().slice() ?? null;
  }
  return call;
}

function stringMap(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof value !== "object" || value === null) return out;
  for (const [key, item] of Object.entries(value)) {
    if (typeof item === "string") out[key] = item;
  }
  return out;
}
