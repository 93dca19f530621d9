/**
 * The service's error answers (SPEC §6): every non-2xx body is
 * `{"error": {"code", "message"}}`, with `problems` for a rejected hook and
 * `field` for a bad request field; never a stack trace.
 *
 * @module
 */
import type { ErrorCode } from "../core/errors.ts";
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
