/**
 * Reading and checking what a request sends: bodies bounded in size, time and
 * pieces; JSON and UTF-8 strictly; path parameters and bodies against their
 * schemas, with text no store can hold refused. Every failure is an
 * {@linkcode ApiError} with its code.
 *
 * @module
 */
import type { Context } from "hono";
import type { z } from "@hono/zod-openapi";
import { base64Bytes, concatBytes } from "../core/bytes.ts";
import { messageOf } from "../core/runtime/failure.ts";
import { unstorableAt } from "../core/schema/storable.ts";
import { tooManyFiles, unpackArchive } from "./archive.ts";
import { MAX_UPLOAD_FILES } from "../core/hook/files.ts";
import type { BodyHold } from "./held_bytes.ts";
import { ApiError } from "./errors.ts";
import { serverSchemas } from "./schemas.ts";

/** Largest hook upload (JSON or gzip'd tar), bytes. */
export const MAX_UPLOAD_BYTES = 16 * 1024 * 1024;
/** Largest body of the small JSON routes, bytes. */
export const MAX_SMALL_BODY = 64 * 1024;
/** Largest body of `POST /v1/audit/ingest`, bytes. */
export const MAX_INGEST_BODY = 8 * 1024 * 1024;

/** A path parameter, validated. */
export function param<T>(c: Context, name: string, schema: z.ZodType<T>): T {
  const value = c.req.param(name);
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new ApiError(400, "REQUEST_INVALID", `${name} ${parsed.error.issues[0]?.message}`, {
      field: name,
    });
  }
  return parsed.data;
}

/** Validates `value`; a bad field is `400 REQUEST_INVALID` naming it. */
export function validate<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) {
    // Text no store can hold is refused here, the same for both stores (schema/storable.ts).
    const field = unstorableAt(parsed.data);
    if (field === null) return parsed.data;
    throw new ApiError(
      400,
      "REQUEST_INVALID",
      `field "${field}" holds a NUL or a lone UTF-16 surrogate, which no store can hold`,
      { field },
    );
  }
  const issue = parsed.error.issues[0];
  const field = issue?.path.map(String).join(".") || undefined;
  const keys = issue?.code === "unrecognized_keys" ? ` ${issue.keys.join(", ")}` : "";
  const message = `${field ? `field "${field}": ` : ""}${issue?.message ?? "invalid"}${keys}`;
  throw new ApiError(400, "REQUEST_INVALID", message, field ? { field } : {});
}

/**
 * Reads the body up to `max` bytes (`413 BODY_TOO_LARGE` past it). A body
 * whose length is declared (`Content-Length`, no `Transfer-Encoding`) of at
 * most {@linkcode WHOLE_READ_BYTES} is taken whole: the HTTP layer ends it at
 * the declared length, and one native read is much cheaper than a stream loop
 * (about 150 µs per request in workerd). Any other body is read piece by
 * piece into a buffer that grows as bytes arrive, and cut off at `max`; a
 * body longer than its declared length (possible in process) is still
 * refused.
 */
export async function readBody(c: Context, max: number): Promise<Uint8Array> {
  try {
    return await readBodyBytes(c.req.raw, max);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    // The client went away mid-body, sent a broken chunked encoding, or the
    // server is shutting down: an answer, not an internal error in the log.
    throw new ApiError(
      400,
      "BODY_UNREADABLE",
      `the request body could not be read: ${messageOf(err).slice(0, 200)}`,
    );
  }
}

/** Longest a request body may take to arrive, ms: a trickled body is cut off. */
export const BODY_READ_MS = 10_000;
/** A service's own `bodyReadMs`, per request (set only when the service names one). */
export const BODY_DEADLINES = new WeakMap<Request, number>();
/** Each tenant request's hold on its body's buffer as it grows (`held_bytes.ts`). */
export const BODY_HOLDS = new WeakMap<Request, BodyHold>();
/**
 * Most pieces a streamed body may arrive in, past a floor: each piece costs
 * the thread that answers every tenant a turn of JavaScript (80,000 one-byte
 * chunks held it for seconds). An honest client sends a body in pieces of
 * many bytes: one of `max` bytes in pieces of 1 KiB on average fits.
 */
const bodyPieces = (max: number) => 64 + Math.ceil(max / 1024);

async function readBodyBytes(request: Request, max: number): Promise<Uint8Array> {
  const length = request.headers.get("content-length");
  const declared = length !== null && /^\d{1,15}$/.test(length) ? Number(length) : NaN;
  if (declared > max) throw tooLarge(max);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const ms = BODY_DEADLINES.get(request) ?? BODY_READ_MS;
  const slow = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      request.body?.cancel().catch(() => {});
      reject(new ApiError(408, "BODY_TOO_SLOW", `the body did not arrive within ${ms} ms`));
    }, ms);
  });
  try {
    const streamed = request.headers.has("transfer-encoding");
    const hold = BODY_HOLDS.get(request);
    if (declared >= 0 && declared <= WHOLE_READ_BYTES && !streamed) {
      hold?.add(declared);
      const bytes = new Uint8Array(await Promise.race([request.arrayBuffer(), slow]));
      if (bytes.byteLength > max) throw tooLarge(max);
      return bytes;
    }
    const fits = declared >= 0 && !streamed ? declared + MIN_VIEW_BYTES : Infinity;
    return await Promise.race([readPieces(request.body, max, fits, hold), slow]);
  } finally {
    clearTimeout(timer);
  }
}

/** A streamed body, at most `max` bytes in at most {@linkcode bodyPieces} pieces. */
async function readPieces(
  stream: ReadableStream<Uint8Array> | null,
  max: number,
  fits = Infinity,
  hold?: BodyHold,
): Promise<Uint8Array> {
  if (stream === null) return new Uint8Array(0);
  let reader: ReadableStreamBYOBReader;
  try {
    reader = stream.getReader({ mode: "byob" });
  } catch {
    return await readChunks(stream, max, hold); // not a byte stream
  }
  // Read into one buffer of ours, grown as it fills: a default reader has the stream allocate a
  // buffer of 64 KiB for every piece, however small (~20 µs a piece under the Deno server,
  // against ~5 µs here).
  // Room past `max` to see a body go over it, and never a view of under MIN_VIEW_BYTES (the Deno
  // server's byte streams never answer a read into a few bytes).
  const limit = max + MIN_VIEW_BYTES;
  const pieces = bodyPieces(max);
  // What is held is the buffer: counted against the tenant as it is allocated.
  const first = Math.min(FIRST_BUFFER_BYTES, limit, fits);
  counted(hold, first, reader);
  let buffer = new Uint8Array(first);
  let used = 0;
  for (let count = 0;; count++) {
    if (buffer.byteLength - used < MIN_VIEW_BYTES) {
      // Grown as bytes arrive, never ahead of them, and to the declared length when it is reached.
      const doubled = Math.min(buffer.byteLength * 2, limit);
      const grow = buffer.byteLength < fits ? Math.min(doubled, fits) : doubled;
      counted(hold, grow - buffer.byteLength, reader);
      const grown = new Uint8Array(grow);
      grown.set(buffer.subarray(0, used));
      buffer = grown;
    }
    const { done, value } = await reader.read(
      new Uint8Array(buffer.buffer, used, buffer.byteLength - used),
    );
    if (value === undefined) break; // cancelled
    buffer = new Uint8Array(value.buffer); // the read moved our buffer into `value`
    if (done) break;
    used += value.byteLength;
    if (used > max || count >= pieces) {
      reader.releaseLock(); // not cancelled: see readChunks
      if (used > max) throw tooLarge(max);
      throw tooManyPieces(pieces);
    }
  }
  // Not much bigger than the body: a caller may keep it a while.
  return used * 2 < buffer.byteLength ? buffer.slice(0, used) : buffer.subarray(0, used);
}

/**
 * Most bytes of a declared body read in one native read. That read allocates
 * the declared length before a byte arrives (a tenant's connections that
 * declare a megabyte and send nothing would hold a megabyte each), and holds
 * the thread that answers every tenant while it collects the body (20–30 ms
 * for a 12 MiB upload).
 */
const WHOLE_READ_BYTES = 64 * 1024;
/** The first buffer a streamed body is read into, bytes (it doubles as it fills). */
const FIRST_BUFFER_BYTES = 16 * 1024;
/** The least room a read of a streamed body is offered, bytes. */
const MIN_VIEW_BYTES = 1024;

/** `readPieces` for a stream that is not a byte stream: chunk by chunk. */
async function readChunks(
  stream: ReadableStream<Uint8Array>,
  max: number,
  hold?: BodyHold,
): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  const pieces = bodyPieces(max);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max || chunks.length >= pieces) {
      // Left unread, not cancelled: under the Deno server a cancelled body is read on to its end,
      // a turn of this thread per piece for as long as its sender goes on (240,000 more
      // one-byte chunks: ~0.9 s); unread, the sender meets back-pressure instead.
      reader.releaseLock();
      if (total > max) throw tooLarge(max);
      throw tooManyPieces(pieces);
    }
    counted(hold, value.byteLength, reader);
    chunks.push(value);
  }
  return concatBytes(chunks, total);
}

/** Counts a piece against its tenant; past its allowance, the rest is left unread (`429`). */
function counted(
  hold: BodyHold | undefined,
  bytes: number,
  reader: { releaseLock(): void },
): void {
  try {
    hold?.add(bytes);
  } catch (err) {
    reader.releaseLock();
    throw err;
  }
}

function tooManyPieces(pieces: number): ApiError {
  return new ApiError(
    400,
    "BODY_UNREADABLE",
    `the body came in more than ${pieces} pieces; send it in larger ones`,
  );
}

/** Strict UTF-8 (a bad byte is an error, not U+FFFD); stateless, so one serves every request. */
const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** Reads a JSON body (`400 JSON_INVALID`); an empty body is `{}` when `emptyOk`. */
export async function readJson(c: Context, max: number, emptyOk = false): Promise<unknown> {
  const text = await readText(c, max);
  if (text.length === 0 && emptyOk) return {};
  return jsonOf(text);
}

/** `text` parsed; text that is not JSON is `400 JSON_INVALID`. */
export function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ApiError(400, "JSON_INVALID", `body is not valid JSON: ${(err as Error).message}`);
  }
}

/** The body as UTF-8 text, at most `max` bytes; bytes that are not UTF-8 are `400 JSON_INVALID`. */
export async function readText(c: Context, max: number): Promise<string> {
  return utf8Text(await readBody(c, max));
}

/** `bytes` as UTF-8 text; bytes that are not UTF-8 are `400 JSON_INVALID`. */
export function utf8Text(bytes: Uint8Array): string {
  try {
    return UTF8.decode(bytes);
  } catch (err) {
    throw new ApiError(400, "JSON_INVALID", `body is not valid JSON: ${(err as Error).message}`);
  }
}

/** The uploaded folder: JSON `{files}` or a gzip'd tar (`Content-Type: application/gzip`). */
export async function readFolder(
  c: Context,
  unpackOn?: (archive: Uint8Array) => Promise<Map<string, Uint8Array>>,
  parseOn?: (json: Uint8Array) => Promise<Map<string, Uint8Array>>,
): Promise<Map<string, Uint8Array>> {
  const type = (c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (
    type === "application/gzip" || type === "application/x-gzip" ||
    type === "application/x-tar+gzip"
  ) {
    const archive = await readBody(c, MAX_UPLOAD_BYTES);
    // Inflated and read where the builder says (the Deno builder: a worker of its own), so
    // that a hostile archive costs the thread answering every tenant nothing.
    return await (unpackOn ?? unpackArchive)(archive);
  }
  const json = await readBody(c, MAX_UPLOAD_BYTES);
  // Up to 16 MiB of JSON and base64: parsed where the builder says too (the Deno
  // builder: a worker of its own) when it is big.
  if (parseOn !== undefined && json.byteLength >= APART_UPLOAD_BYTES) return await parseOn(json);
  return uploadFiles(json);
}

/** JSON uploads of at least this many bytes are parsed where the builder says. */
export const APART_UPLOAD_BYTES = 64 * 1024;

/**
 * The files of a JSON upload body (`{files: {path: text | {base64}}}`);
 * `400 JSON_INVALID` / `REQUEST_INVALID` naming the field otherwise.
 */
export function uploadFiles(json: Uint8Array): Map<string, Uint8Array> {
  const text = utf8Text(json);
  const parsed = jsonOf(text);
  // Counted before the schema looks at each file.
  const listed = (parsed as { files?: unknown } | null)?.files;
  if (typeof listed === "object" && listed !== null && !Array.isArray(listed)) {
    const count = Object.keys(listed).length;
    if (count > MAX_UPLOAD_FILES) throw tooManyFiles(count);
  }
  const body = validate(serverSchemas().uploadSchema, parsed);
  const files = new Map<string, Uint8Array>();
  const encoder = new TextEncoder();
  for (const [path, value] of Object.entries(body.files)) {
    if (typeof value === "string") files.set(path, encoder.encode(value));
    else {
      try {
        files.set(path, base64Bytes(value.base64));
      } catch {
        throw new ApiError(400, "REQUEST_INVALID", `field "files.${path}": base64 is invalid`, {
          field: `files.${path}`,
        });
      }
    }
  }
  return files;
}

function tooLarge(max: number): ApiError {
  return new ApiError(413, "BODY_TOO_LARGE", `body is over the ${max}-byte cap`);
}

export function stripUndefined<T extends Record<string, unknown>>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
