/** Shared CLI plumbing: exit codes, error lines, stdin. */
import { HookboxError, isHookboxError } from "../errors.ts";

/** Exit codes of the CLI. */
export const EXIT = { allow: 0, block: 2, bad: 1 } as const;

/** Thrown by commands to end with a one-line error and exit 1. */
export class UsageError extends Error {}

/** Reads all of stdin as text. */
export async function readStdin(): Promise<string> {
  return await new Response(Deno.stdin.readable).text();
}

/** One line for stderr describing `err`. */
export function errorLine(err: unknown): string {
  if (isHookboxError(err)) return `hookbox: ${err.toLine()}`;
  const text = err instanceof UsageError || err instanceof TypeError
    ? err.message
    : `INTERNAL: ${(err as Error)?.message ?? String(err)}`;
  return `hookbox: ${text.replace(/\s*\n\s*/g, " ")}`;
}

/** Fails with a usage error unless `value` is a non-empty string. */
export function requireValue(flag: string, value: unknown): string {
  if (typeof value !== "string" || value === "") throw new UsageError(`${flag} needs a value`);
  return value;
}

export { HookboxError };
