/**
 * Load-time refusals (`HookboxError`s from the loader) expressed as the
 * `RunFailure` a call reports.
 *
 * @module
 */
import { isHookboxError } from "../../errors.ts";
import type { RunFailure, RunResult } from "../types.ts";

/** A result for a call that never ran. */
export function failed(outcome: RunFailure["outcome"], detail: string): RunResult {
  return { exitCode: null, stdout: "", stderr: "", failure: { outcome, detail } };
}

/** Maps a loading error to the failure a call reports. */
export function loadFailure(err: unknown): RunResult {
  if (!isHookboxError(err)) {
    return failed("error", `load: ${err instanceof Error ? err.message : String(err)}`);
  }
  switch (err.code) {
    case "LIMIT_MODULE":
      return failed("limit", "module");
    case "LIMIT_MEMORY":
      return failed("limit", "memory");
    case "PLUGIN_HASH_MISMATCH":
      return failed("error", "hash mismatch");
    case "PLUGIN_IMPORT_DENIED":
      return failed("error", `import denied: ${err.field ?? err.message}`);
    case "PLUGIN_EXPORT_MISSING":
      return failed("error", `export missing: ${err.message}`);
    case "PLUGIN_FEATURE_DENIED":
      return failed("error", `feature denied: ${err.message}`);
    case "PLUGIN_INVALID":
      return failed("error", `invalid module: ${err.message}`);
    default:
      return failed("error", `${err.code}: ${err.message}`);
  }
}
