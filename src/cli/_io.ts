/** Shared CLI plumbing: exit codes, error lines, stdin. */
import { HookboxError, isHookboxError } from "../errors.ts";
import { concatBytes } from "../bytes.ts";

/** Exit codes of the CLI. */
export const EXIT = { allow: 0, block: 2, bad: 1 } as const;

/** Thrown by commands to end with a one-line error and exit 1. */
export class UsageError extends Error {}

/** Reads stdin as text, refusing more than `maxBytes` (`LIMIT_INPUT`) before reading it all. */
export async function readStdin(maxBytes: number = MAX_STDIN_BYTES): Promise<string> {
  const bytes = await readAllCapped(
    Deno.stdin.readable,
    maxBytes,
    () => new HookboxError("LIMIT_INPUT", `stdin is over the ${maxBytes}-byte cap`),
  );
  return new TextDecoder().decode(bytes);
}

/** Reads `stream` to its end; past `maxBytes` it stops reading and throws `tooBig()`. */
export async function readAllCapped(
  stream: ReadableStream<Uint8Array>,
  maxBytes: number,
  tooBig: () => Error,
): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  for await (const chunk of stream) {
    length += chunk.byteLength;
    if (length > maxBytes) throw tooBig(); // leaving the loop cancels the stream
    chunks.push(chunk);
  }
  return concatBytes(chunks, length);
}

/** Most bytes a command reads from stdin (an event, an agent's hook payload). */
export const MAX_STDIN_BYTES = 16 * 1024 * 1024;

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
