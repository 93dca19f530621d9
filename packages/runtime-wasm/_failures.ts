/**
 * Load-time refusals (`HookboxError`s from the loader) expressed as the
 * `RunFailure` a call reports.
 *
 * @module
 */
import { isHookboxError } from "../core/errors.ts";
import { type FailureCode, messageOf, runFailure } from "../core/runtime/failure.ts";
import type { RunResult } from "../core/runtime/types.ts";

/** A result for a call that never ran. */
export function failed(code: FailureCode, message?: string): RunResult {
  return { exitCode: null, stdout: "", stderr: "", failure: runFailure(code, message) };
}

/** Maps a loading error to the failure a call reports. */
export function loadFailure(err: unknown): RunResult {
  if (!isHookboxError(err)) return failed("LOAD_FAILED", messageOf(err));
  switch (err.code) {
    case "LIMIT_MODULE":
      // Over the size cap: the record names the cap and the setting. Any other limit of the
      // module's shape (tables, nesting, an engine's counts) says which.
      return err.field === "module_kb" ? failed("LIMIT_MODULE") : failed(err.code, err.message);
    case "LIMIT_MEMORY":
      return failed("LIMIT_MEMORY");
    case "PLUGIN_HASH_MISMATCH":
      return failed("PLUGIN_HASH_MISMATCH");
    case "PLUGIN_IMPORT_DENIED":
      return failed("PLUGIN_IMPORT_DENIED", err.field ?? err.message);
    case "PLUGIN_EXPORT_MISSING":
    case "PLUGIN_FEATURE_DENIED":
    case "PLUGIN_INVALID":
      return failed(err.code, err.message);
    default:
      return failed("LOAD_FAILED", `${err.code}: ${err.message}`);
  }
}
