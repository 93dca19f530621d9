import type { z } from "zod";
import { type ErrorCode, HookboxError } from "../errors.ts";

/** Dotted path of a zod issue (`matcher.tool`, `messages.0.role`). */
export function issuePath(issue: z.core.$ZodIssue): string {
  return issue.path.map(String).join(".");
}

/** Every issue of a zod error as `{field, message}`, worded like {@linkcode toHookboxError}. */
export function allIssues(
  error: z.ZodError,
  what: string,
): { field: string | null; message: string }[] {
  return error.issues.map((issue) => {
    const field = issuePath(issue);
    const detail = describeIssue(issue);
    const sep = /^(is|must|unknown) /.test(detail) ? " " : ": ";
    return {
      field: field || null,
      message: field ? `${what} field "${field}"${sep}${detail}` : `${what}: ${detail}`,
    };
  });
}

/** Turns the first zod issue into a HookboxError that names the field. */
export function toHookboxError(
  code: ErrorCode,
  error: z.ZodError,
  what: string,
  path?: string,
): HookboxError {
  const issue = error.issues[0];
  const field = issue ? issuePath(issue) : "";
  const detail = issue ? describeIssue(issue) : "invalid";
  const sep = /^(is|must|unknown) /.test(detail) ? " " : ": ";
  const message = field ? `${what} field "${field}"${sep}${detail}` : `${what}: ${detail}`;
  return new HookboxError(code, message, {
    ...(path === undefined ? {} : { path }),
    ...(field ? { field } : {}),
    cause: error,
  });
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === "invalid_type" && issue.message.includes("received undefined")) {
    return "is required";
  }
  if (issue.code === "unrecognized_keys") {
    return `unknown key(s) ${issue.keys.map((k) => `"${k}"`).join(", ")}`;
  }
  return issue.message;
}
