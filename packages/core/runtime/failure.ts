/**
 * Per-call failures as coded data. Every way a call can end without a normal
 * answer has one stable code (one of `ERROR_CODES`, documented in `docs/errors.md`); the code fixes
 * the outcome and the short token SPEC §4 calls `detail`, and any free text is
 * carried apart as `message`.
 *
 * ```ts
 * import { runFailure } from "./failure.ts";
 * const f = runFailure("TRAP", "unreachable");
 * // { outcome: "error", code: "TRAP", message: "unreachable", detail: "trap: unreachable" }
 * ```
 *
 * @module
 */
import type { ErrorCode } from "../errors.ts";

/** The outcome a failed call is recorded with. */
export type FailureOutcome = "error" | "timeout" | "limit" | "skipped";

/** Every per-call failure code, with its outcome and `detail` token. */
export const FAILURE_CODES = {
  LIMIT_FUEL: { outcome: "limit", token: "fuel" },
  LIMIT_MEMORY: { outcome: "limit", token: "memory" },
  LIMIT_STACK: { outcome: "limit", token: "stack" },
  LIMIT_OUTPUT: { outcome: "limit", token: "output" },
  LIMIT_INPUT: { outcome: "limit", token: "input" },
  LIMIT_MODULE: { outcome: "limit", token: "module" },
  TIMEOUT: { outcome: "timeout", token: "time" },
  ABORTED: { outcome: "error", token: "aborted" },
  TRAP: { outcome: "error", token: "trap" },
  EXIT_CODE: { outcome: "error", token: "exit code" },
  OUTPUT_INVALID: { outcome: "error", token: "invalid output" },
  PLUGIN_INVALID: { outcome: "error", token: "invalid module" },
  PLUGIN_HASH_MISMATCH: { outcome: "error", token: "hash mismatch" },
  PLUGIN_IMPORT_DENIED: { outcome: "error", token: "import denied" },
  PLUGIN_EXPORT_MISSING: { outcome: "error", token: "export missing" },
  PLUGIN_FEATURE_DENIED: { outcome: "error", token: "feature denied" },
  LOAD_FAILED: { outcome: "error", token: "load" },
  INSTANTIATE_FAILED: { outcome: "error", token: "instantiate" },
  HTTP_DENIED: { outcome: "error", token: "http denied" },
  HTTP_FAILED: { outcome: "error", token: "http_request" },
  SPAWN_FAILED: { outcome: "error", token: "spawn" },
  KILLED_BY_SIGNAL: { outcome: "error", token: "signal" },
  PROMPT_INVALID: { outcome: "error", token: "prompt hook" },
  WORKER_FAILED: { outcome: "error", token: "worker" },
  HOST_FAULT: { outcome: "error", token: "host" },
  SUBPROCESS_DENIED: { outcome: "skipped", token: "subprocess not permitted" },
  RUNTIME_MISSING: { outcome: "skipped", token: "no runtime configured" },
} as const satisfies Partial<Record<ErrorCode, { outcome: FailureOutcome; token: string }>>;

/** A stable per-call failure code. */
export type FailureCode = keyof typeof FAILURE_CODES;

/** Why a call did not produce a normal exit. */
export interface RunFailure {
  /** The outcome the failure gives the hook. */
  outcome: FailureOutcome;
  /** Stable code; see {@linkcode FAILURE_CODES}. */
  code: FailureCode;
  /** Free text for people (the trap message, the import's name, ...), or null. */
  message: string | null;
  /** SPEC §4's `detail`: the code's token, then `: message` when there is one. */
  detail: string;
}

/**
 * Longest free text a failure keeps. Its text can come from the plugin (an
 * import's name, a trap's message) and goes into every result and audit row
 * of every event the hook sees: unbounded, one small module would make each
 * event's answer and row megabytes long.
 */
export const MAX_FAILURE_MESSAGE = 2048;

/** `text` cut to `max` characters, saying how many were left out. */
export function clipped(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}… (${text.length - max} more characters)`;
}

/** Builds the failure for `code`, with optional free text (at most {@linkcode MAX_FAILURE_MESSAGE} characters). */
export function runFailure(code: FailureCode, message?: string | null): RunFailure {
  const { outcome, token } = FAILURE_CODES[code];
  const text = message == null ? null : clipped(message, MAX_FAILURE_MESSAGE);
  return { outcome, code, message: text, detail: text === null ? token : `${token}: ${text}` };
}

/** The message of any thrown value. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
