/**
 * An upload's {@linkcode HookboxError} as the problems the service answers
 * (`422 HOOK_REJECTED`), paths relative to the uploaded folder. Shared by the
 * builder and the worker that reads an upload's manifest.
 *
 * @module
 */
import { z } from "zod";
import { allIssues } from "../../core/schema/issues.ts";
import { isHookboxError } from "../../core/errors.ts";
import type { Problem } from "../../service/builder.ts";

/** The problems `err` names, or null for an error that is not a `HookboxError`. */
export function hookProblems(err: unknown): Problem[] | null {
  if (!isHookboxError(err)) return null;
  const path = err.path ? err.path.replace(/^.*hookbox-upload-[^/]+\/[^/]+\/?/, "") || null : null;
  // A manifest with several bad fields: report every one, not only the first.
  if (err.cause instanceof z.ZodError && err.cause.issues.length > 1) {
    return allIssues(err.cause, "HOOK.md").map((i) => ({ code: err.code, path, ...i }));
  }
  return [{ code: err.code, path, field: err.field ?? null, message: err.message }];
}
