/**
 * Errors are data: every failure hookbox reports carries a stable `code` that
 * callers and tests branch on, a human `message`, and optional structured
 * context (`path`, `field`).
 *
 * @module
 */

/**
 * Every code hookbox reports, in one list: what the library and the CLI
 * throw ({@linkcode HookboxError}), what one hook call fails with (a
 * `RunFailure`, a result's `hooks[].code`, an audit row's) and what the
 * service answers (`{"error": {"code"}}`). A code means the same wherever it
 * appears; docs/errors.md says where each does. Stable: never renamed, only added.
 */
export const ERROR_CODES = [
  // Events, hook folders and options: thrown (the service answers them 400 or 422).
  "EVENT_INVALID",
  "EVENT_JSON_INVALID",
  "HOOK_MANIFEST_INVALID",
  "HOOK_MANIFEST_MISSING",
  "HOOK_NAME_MISMATCH",
  "HOOK_ENTRY_MISSING",
  "HOOK_OUTPUT_INVALID",
  "HOOK_DIR_UNREADABLE",
  "HOOK_NAME_CONFLICT",
  "HOOK_FILE_TOO_LARGE",
  "HOOK_PATH_OUTSIDE",
  "HOOK_TOO_MANY",
  "JSON_TOO_DEEP",
  "OPTION_INVALID",
  "CURSOR_INVALID",
  "PROMPT_HOOK_INVALID",
  "COMPILE_FAILED",
  "COMPILE_API_DENIED",
  "TOOLCHAIN_MISSING",
  // Plugins and limits: thrown while loading, or one hook call's failure.
  "PLUGIN_INVALID",
  "PLUGIN_IMPORT_DENIED",
  "PLUGIN_HASH_MISMATCH",
  "PLUGIN_EXPORT_MISSING",
  "PLUGIN_FEATURE_DENIED",
  "LIMIT_FUEL",
  "LIMIT_MEMORY",
  "LIMIT_STACK",
  "LIMIT_OUTPUT",
  "LIMIT_INPUT",
  "LIMIT_MODULE",
  "SUBPROCESS_DENIED",
  // One hook call's failure (runtime/failure.ts gives each its outcome and detail token).
  "TIMEOUT",
  "ABORTED",
  "TRAP",
  "EXIT_CODE",
  "OUTPUT_INVALID",
  "LOAD_FAILED",
  "INSTANTIATE_FAILED",
  "HTTP_DENIED",
  "HTTP_FAILED",
  "SPAWN_FAILED",
  "KILLED_BY_SIGNAL",
  "PROMPT_INVALID",
  "WORKER_FAILED",
  "HOST_FAULT",
  "RUNTIME_MISSING",
  // The service's answers.
  "REQUEST_INVALID",
  "JSON_INVALID",
  "BODY_TOO_LARGE",
  "BODY_TOO_SLOW",
  "BODY_UNREADABLE",
  "ARCHIVE_INVALID",
  "UNAUTHENTICATED",
  "FORBIDDEN",
  "NOT_FOUND",
  "TENANT_NOT_FOUND",
  "TENANT_EXISTS",
  "TENANT_GONE",
  "KEY_NOT_FOUND",
  "HOOK_NOT_FOUND",
  "VERSION_NOT_FOUND",
  "AGENT_UNKNOWN",
  "HOOK_REJECTED",
  "HOOK_TEST_FAILED",
  "QUOTA_EXCEEDED",
  "STORE_UNAVAILABLE",
  "SHUTTING_DOWN",
  "OUT_OF_FILES",
  "ANSWER_TOO_SLOW",
  "CONFIG_INVALID",
  "NOT_IMPLEMENTED",
  // Anywhere: a bug of hookbox's own.
  "INTERNAL",
] as const;

/** A stable error code. */
export type ErrorCode = typeof ERROR_CODES[number];

const KNOWN: ReadonlySet<string> = new Set(ERROR_CODES);

/** True when `code` is one of {@linkcode ERROR_CODES} (text read back from a child process, a store). */
export function isErrorCode(code: string): code is ErrorCode {
  return KNOWN.has(code);
}

/**
 * `text` on one line: each run of white space that holds a line break
 * becomes one space, in time linear in the text (the regex that says so
 * directly, white space then a line break then white space, is quadratic in
 * V8 on a long run of spaces without a break: 8 s for 160,000; and error
 * messages quote what an event or a hook folder holds).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { oneLine } from "./errors.ts";
 * assert.equal(oneLine("a  \n\n  b c"), "a b c");
 * ```
 */
export function oneLine(text: string): string {
  if (!text.includes("\n")) return text;
  return text.replace(/\s+/g, (run) => run.includes("\n") ? " " : run);
}

/** Structured context attached to a {@linkcode HookboxError}. */
export interface ErrorContext {
  /** File or folder the error is about. */
  path?: string;
  /** Dotted field name inside that input (`matcher.tool`, `tool_input`). */
  field?: string;
  /** Byte offset inside that input (a WebAssembly module the rewriter could not read). */
  offset?: number;
  /** The underlying error, kept for logs; never shown to API clients. */
  cause?: unknown;
}

/**
 * The one error class hookbox throws for expected failures.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { HookboxError } from "./errors.ts";
 * const err = new HookboxError("EVENT_INVALID", "missing field", { field: "tool_name" });
 * assert(err.code === "EVENT_INVALID" && err.field === "tool_name");
 * ```
 */
export class HookboxError extends Error {
  /** Always `HookboxError`. */
  override readonly name = "HookboxError";
  /** The stable error code. */
  readonly code: ErrorCode;
  /** The file or folder concerned, if any. */
  readonly path: string | undefined;
  /** The field concerned, if any. */
  readonly field: string | undefined;
  /** The byte offset concerned, if any. */
  readonly offset: number | undefined;

  /** Builds an error with its code, message and context. */
  constructor(code: ErrorCode, message: string, context: ErrorContext = {}) {
    super(message, context.cause === undefined ? undefined : { cause: context.cause });
    this.code = code;
    this.path = context.path;
    this.field = context.field;
    this.offset = context.offset;
  }

  /** One line: `CODE path: message`, as the CLI prints it. */
  toLine(): string {
    return oneLine(`${this.code}${this.path ? ` ${this.path}` : ""}: ${this.message}`);
  }

  /** A plain object safe to serialise for clients (no stack, no cause). */
  toJSON(): { code: ErrorCode; message: string; path?: string; field?: string; offset?: number } {
    return {
      code: this.code,
      message: this.message,
      ...(this.path === undefined ? {} : { path: this.path }),
      ...(this.field === undefined ? {} : { field: this.field }),
      ...(this.offset === undefined ? {} : { offset: this.offset }),
    };
  }
}

/** True when `err` is a {@linkcode HookboxError}, optionally with the given code. */
export function isHookboxError(err: unknown, code?: ErrorCode): err is HookboxError {
  return err instanceof HookboxError && (code === undefined || err.code === code);
}
