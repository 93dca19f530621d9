/** Shared CLI plumbing: exit codes, error lines, stdin. */
import { HookboxError, isHookboxError, oneLine } from "../core/errors.ts";
import { concatBytes } from "../core/bytes.ts";
import { CallContext } from "../host-deno/call_context.ts";

/** Exit codes of the CLI. */
export const EXIT = { allow: 0, block: 2, bad: 1 } as const;

/** Thrown by commands to end with a one-line error and exit 1. */
export class UsageError extends Error {}

/**
 * Reads stdin as text, refusing more than `maxBytes` (`LIMIT_INPUT`) before
 * reading it all. Plain reads, not `Deno.stdin.readable`: setting up the
 * streams machinery costs a one-shot process ~5 ms.
 */
export async function readStdin(maxBytes: number = MAX_STDIN_BYTES): Promise<string> {
  const chunks: Uint8Array[] = [];
  const buffer = new Uint8Array(64 * 1024);
  let length = 0;
  for (let n = await Deno.stdin.read(buffer); n !== null; n = await Deno.stdin.read(buffer)) {
    length += n;
    if (length > maxBytes) {
      const head = new TextDecoder().decode(chunks[0] ?? buffer.subarray(0, n));
      throw new StdinTooLarge(`stdin is over the ${maxBytes}-byte cap`, head);
    }
    chunks.push(buffer.slice(0, n));
  }
  return new TextDecoder().decode(concatBytes(chunks, length));
}

/** `LIMIT_INPUT` from {@linkcode readStdin}, with the first chunk read (its event name may be in it). */
export class StdinTooLarge extends HookboxError {
  /** The first bytes of stdin, as text. */
  readonly head: string;
  constructor(message: string, head: string) {
    super("LIMIT_INPUT", message);
    this.head = head;
  }
}

let stdinRead: Promise<string> | null = null;

/**
 * The daemon's calls (`daemon.ts`), each its stdin and working directory
 * standing in for the process's within the call, however many run at once.
 */
const calls = new CallContext<{ stdin: string; cwd: string }>();

/** {@linkcode readStdin} once per process: every call gets the same text (or error). */
export function stdinOnce(): Promise<string> {
  const call = calls.getStore();
  if (call !== undefined) return Promise.resolve(call.stdin);
  return stdinRead ??= readStdin();
}

/** The working directory of the call: the daemon's call's, else the process's. */
export function callerCwd(): string {
  return calls.getStore()?.cwd ?? Deno.cwd();
}

/** Runs `fn` as the call `io` describes: `stdinOnce` and `callerCwd` answer for it within. */
export function asCall<T>(io: { stdin: string; cwd: string }, fn: () => Promise<T>): Promise<T> {
  return calls.run(io, fn);
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
  const text = err instanceof UsageError || err instanceof TypeError || isParseArgsError(err)
    ? (err as Error).message
    : `INTERNAL: ${(err as Error)?.message ?? String(err)}`;
  return `hookbox: ${oneLine(text)}`;
}

/**
 * A bad command line as `parseArgs` reports it: a TypeError from `node:util`,
 * an Error with the same `ERR_PARSE_ARGS_*` code from its polyfill (the
 * bundled CLI's).
 */
function isParseArgsError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return err instanceof Error && typeof code === "string" && code.startsWith("ERR_PARSE_ARGS_");
}

/** Fails with a usage error unless `value` is a non-empty string. */
export function requireValue(flag: string, value: unknown): string {
  if (typeof value !== "string" || value === "") throw new UsageError(`${flag} needs a value`);
  return value;
}

export { HookboxError };
