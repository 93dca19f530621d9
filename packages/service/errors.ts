/**
 * The service's error answers (SPEC §6): every non-2xx body is
 * `{"error": {"code", "message"}}`, with `problems` for a rejected hook and
 * `field` for a bad request field; never a stack trace.
 *
 * @module
 */
import { type ErrorCode, isHookboxError } from "../core/errors.ts";
import { StoreUnavailable } from "../store/store.ts";
import type { Problem } from "./builder.ts";

/** HTTP status codes the service answers errors with. */
export type ErrorStatus =
  | 400
  | 401
  | 403
  | 404
  | 408
  | 409
  | 413
  | 415
  | 422
  | 429
  | 500
  | 501
  | 503;

/** Seconds a `503` asks the client to wait when its thrower names none. */
const DEFAULT_RETRY_AFTER = 1;

/** An error the API answers as-is. Every `503` carries `Retry-After`. */
export class ApiError extends Error {
  readonly extra: { field?: string; problems?: Problem[]; retryAfter?: number };

  constructor(
    readonly status: ErrorStatus,
    readonly code: ErrorCode,
    message: string,
    extra: { field?: string; problems?: Problem[]; retryAfter?: number } = {},
  ) {
    super(message);
    this.name = "ApiError";
    this.extra = status === 503 && extra.retryAfter === undefined
      ? { ...extra, retryAfter: DEFAULT_RETRY_AFTER }
      : extra;
  }

  /** The JSON body of the answer. */
  body(): { error: Record<string, unknown> } {
    const error: Record<string, unknown> = { code: this.code, message: this.message };
    if (this.extra.field !== undefined) error.field = this.extra.field;
    if (this.extra.problems !== undefined) error.problems = this.extra.problems;
    return { error };
  }
}

export const unauthenticated = () =>
  new ApiError(401, "UNAUTHENTICATED", "missing or unknown API key (Authorization: Bearer KEY)");
export const forbidden = (why: string) => new ApiError(403, "FORBIDDEN", why);
export const hookNotFound = (name: string) =>
  new ApiError(404, "HOOK_NOT_FOUND", `no hook named "${name}"`);
export const tenantNotFound = (id: string) =>
  new ApiError(404, "TENANT_NOT_FOUND", `no tenant "${id}"`);
export const storeUnavailable = () =>
  new ApiError(503, "STORE_UNAVAILABLE", "the store cannot be written; nothing was recorded");

/**
 * What the service answers for an error that is not an `ApiError`: the store
 * not answering (`503 STORE_UNAVAILABLE`), the process out of file
 * descriptors (`503 OUT_OF_FILES`), a hookbox error (`400`), else `500
 * INTERNAL`; each logged as one line.
 */
export function apiErrorOf(err: unknown, log: (e: Record<string, unknown>) => void): ApiError {
  if (err instanceof StoreUnavailable) {
    log({ at: new Date().toISOString(), level: "error", msg: "store", error: err.message });
    return new ApiError(503, "STORE_UNAVAILABLE", "the store did not answer; retry later", {
      retryAfter: 1,
    });
  }
  if (outOfFiles(err)) {
    log({ at: new Date().toISOString(), level: "error", msg: "files", error: String(err) });
    return new ApiError(
      503,
      "OUT_OF_FILES",
      "the server is out of file descriptors (too many connections open); retry later",
      { retryAfter: 1 },
    );
  }
  log({ at: new Date().toISOString(), level: "error", msg: "unhandled", error: String(err) });
  if (isHookboxError(err)) return new ApiError(400, err.code, err.message);
  return new ApiError(500, "INTERNAL", "internal error; see the server log");
}

/**
 * The process (or the system) out of file descriptors: any client can bring
 * it there by holding connections open, and it passes once they close, so it
 * is a `503` to retry, not a fault of hookbox's (Deno says it in the message,
 * Node in `code`).
 */
export function outOfFiles(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  return code === "EMFILE" || code === "ENFILE" || /too many open files/i.test(String(message));
}
