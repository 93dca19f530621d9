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
  const path = err.path ? withoutUploadRoot(err.path) || null : null;
  // A manifest with several bad fields: report every one, not only the first.
  if (err.cause instanceof z.ZodError && err.cause.issues.length > 1) {
    return allIssues(err.cause, "HOOK.md").map((i) => ({ code: err.code, path, ...i }));
  }
  return [{ code: err.code, path, field: err.field ?? null, message: err.message }];
}

const UPLOAD_MARK = "hookbox-upload-";
/** What ends a path in a message: white space, quotes, parentheses. */
const PATH_BREAKS = /([\s"'()]+)/;
/** The rest of an upload folder's path after its mark, at `lastIndex` of a path: `XXXX/NAME/`. */
const UPLOAD_TAIL = /[A-Za-z0-9_]+\/[^/]+\/?/y;

/**
 * `text` without any upload folder's path (`/tmp/hookbox-upload-…/NAME/`):
 * in each path (a run without white space, quotes or parentheses), from its
 * first `/` through the first `hookbox-upload-XXXX/NAME/` after it. Linear
 * in the text: a message can quote a tenant's source or a hook's output, and
 * the one regex that says this took 2 s on 80,000 slashes.
 *
 * @example
 * ```ts ignore
 * withoutUploadRoot("error in /tmp/hookbox-upload-ab12/guard/scripts/run.ts:3")
 * // "error in scripts/run.ts:3"
 * ```
 */
export function withoutUploadRoot(text: string): string {
  if (!text.includes(UPLOAD_MARK)) return text;
  return text.split(PATH_BREAKS).map((part, i) => i % 2 === 1 ? part : pathWithout(part)).join(
    "",
  );
}

function pathWithout(path: string): string {
  let out = "";
  let from = 0;
  for (;;) {
    const start = path.indexOf("/", from);
    if (start < 0) break;
    let end = -1;
    for (let mark = path.indexOf(UPLOAD_MARK, start + 1); mark >= 0;) {
      UPLOAD_TAIL.lastIndex = mark + UPLOAD_MARK.length;
      if (UPLOAD_TAIL.test(path)) {
        end = UPLOAD_TAIL.lastIndex;
        break;
      }
      mark = path.indexOf(UPLOAD_MARK, mark + 1);
    }
    if (end < 0) break;
    out += path.slice(from, start);
    from = end;
  }
  return out + path.slice(from);
}
