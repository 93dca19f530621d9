/**
 * What a tenant's requests hold in the server's memory: bodies as they
 * arrive, and answers its clients have not taken yet.
 *
 * A body is held until its request is answered, and one that arrives slowly
 * is held for up to the body deadline: a tenant's connections each sending
 * most of a 1 MiB event and then waiting held a mebibyte each. An answer is
 * made whole before it is written, and one whose client does not read it
 * stays in memory for as long as the connection stays open: a few bytes of
 * request can ask for megabytes of answer (an event whose hooks print 4 MiB
 * is answered with up to 24 MiB once escaped; an audit page is up to 4 MiB),
 * so a tenant's connections that send and never read held about a gigabyte
 * per hundred. Enough of either would end the server for every tenant.
 *
 * So each body counts against its tenant by the buffer it is read into
 * (grown as its bytes arrive), until the
 * request is answered, and each answer of at least
 * {@linkcode COUNTED_MIN_BYTES} from when it is made until the HTTP layer has
 * taken its last byte or its client has gone. A tenant whose count has
 * reached its allowance ({@linkcode TENANT_HELD_BYTES} by default), or its
 * even share of the server's ({@linkcode SERVER_HELD_BYTES}) while all
 * tenants together hold that much, is refused
 * `429 QUOTA_EXCEEDED` with `Retry-After` before anything of a request is
 * read or run; a body that reaches it is refused without reading the rest;
 * and a big answer made while the tenant is at it (requests sent at once all
 * passed the first check) is dropped for the same `429` — an event's decision
 * is audited all the same, as for a client that went away before its answer.
 *
 * A counted answer is handed over a slice at a time as the connection takes
 * it: a body given whole would be held by the HTTP layer, unseen, until it is
 * written.
 *
 * @module
 */
import type { Context } from "hono";
import { ApiError } from "./errors.ts";
import { concatBytes } from "../core/bytes.ts";
import { piecesLength } from "../core/schema/lazy_json.ts";

/** Smallest answer counted, bytes: smaller ones cost about what their connection does. */
export const COUNTED_MIN_BYTES = 16 * 1024;

/** What a tenant's requests may hold before they are refused, bytes. */
export const TENANT_HELD_BYTES = 64 * 1024 * 1024;

/**
 * What all tenants' requests may hold, bytes: past it, a tenant holding at
 * least its even share of it is refused too.
 */
export const SERVER_HELD_BYTES = 1024 * 1024 * 1024;

/**
 * Whom the answers of routes open to anyone (the OpenAPI document and its
 * page) count against: together, unauthenticated clients may leave as much
 * of them unread as one tenant.
 */
export const ANYONE = "\u0000anyone";

/** Bytes handed to the HTTP layer per read of a counted answer. */
const SLICE_BYTES = 256 * 1024;

const UTF8 = new TextEncoder();

/** Counts a body's buffer against its tenant as it grows (see `readBody`). */
export interface BodyHold {
  /** Counts `bytes` more; throws the `429` once the tenant is at its allowance. */
  add(bytes: number): void;
  /** Uncounts all it counted (once the request is answered). */
  release(): void;
}

/** Bytes held per tenant (see the module doc). */
export class HeldBytes {
  readonly #held = new Map<string, number>();
  readonly #allowance: number;
  readonly #serverAllowance: number;
  #total = 0;

  constructor(allowance: number = TENANT_HELD_BYTES, serverAllowance = SERVER_HELD_BYTES) {
    this.#allowance = allowance;
    this.#serverAllowance = serverAllowance;
  }

  /** Bytes all tenants' requests hold now. */
  get total(): number {
    return this.#total;
  }

  /** Bytes `tenant`'s requests hold now. */
  held(tenant: string): number {
    return this.#held.get(tenant) ?? 0;
  }

  /**
   * Throws the `429` for a tenant at its allowance, or at its even share of
   * the server's while all tenants together are at that.
   */
  check(tenant: string): void {
    const held = this.#held.get(tenant);
    if (held === undefined) return;
    if (held < this.#allowance) {
      if (this.#total < this.#serverAllowance) return;
      if (held < this.#serverAllowance / this.#held.size) return;
    }
    throw new ApiError(
      429,
      "QUOTA_EXCEEDED",
      `over the tenant's quota of memory held for its requests: ${
        mib(held)
      } of bodies still arriving and answers not yet read (at most ${
        mib(this.#allowance)
      }, less while the server holds ${
        mib(this.#serverAllowance)
      } for all tenants); read the answers, or close those connections`,
      { retryAfter: 1 },
    );
  }

  /** A hold for one request body of `tenant`'s. */
  body(tenant: string): BodyHold {
    let counted = 0;
    return {
      add: (bytes) => {
        counted += bytes;
        this.#add(tenant, bytes);
        this.check(tenant);
      },
      release: () => {
        this.#add(tenant, -counted);
        counted = 0;
      },
    };
  }

  /**
   * `body` as a JSON answer of `tenant`'s, counted while unread when it is
   * big. Pieces (`lazyJsonPieces`) are written one after another, never
   * joined: a big answer is not copied again on this thread.
   */
  json(
    c: Context,
    tenant: string,
    body: Uint8Array | string | readonly Uint8Array[],
    contentType = "application/json",
  ): Response {
    const headers = { "content-type": contentType };
    // A string of fewer characters than the threshold's third is fewer bytes than it.
    if (typeof body === "string" && body.length * 3 < COUNTED_MIN_BYTES) {
      return c.body(body, 200, headers);
    }
    const pieces = typeof body === "string"
      ? [UTF8.encode(body)]
      : body instanceof Uint8Array
      ? [body]
      : body;
    const length = piecesLength(pieces);
    if (length < COUNTED_MIN_BYTES) {
      const bytes = pieces.length === 1 ? pieces[0]! : concatBytes(pieces, length);
      return c.body(bytes as Uint8Array<ArrayBuffer>, 200, headers);
    }
    const sized = { ...headers, "content-length": String(length) };
    // Hono answers `HEAD` with the `GET` handler's headers and drops its body
    // unread and never cancelled: a counted one would stay counted for ever.
    if (c.req.method === "HEAD") return c.body(null, 200, sized);
    // Checked again now that it is made: requests sent together all passed the first check.
    this.check(tenant);
    return c.body(this.#counted(tenant, pieces, length), 200, sized);
  }

  /** `value` as a JSON answer of `tenant`'s (see {@linkcode json}). */
  value(c: Context, tenant: string, value: unknown): Response {
    return this.json(c, tenant, JSON.stringify(value));
  }

  /** `pieces` as a stream read a slice at a time, counted against `tenant` until it ends. */
  #counted(
    tenant: string,
    pieces: readonly Uint8Array[],
    length: number,
  ): ReadableStream<Uint8Array> {
    this.#add(tenant, length);
    let piece = 0;
    let at = 0;
    let counted = true;
    const release = () => {
      if (!counted) return;
      counted = false;
      this.#add(tenant, -length);
    };
    return new ReadableStream<Uint8Array>({
      pull: (controller) => {
        // Empty pieces are skipped: an empty chunk would end nothing and look like a write.
        while (piece < pieces.length && at === pieces[piece]!.byteLength) {
          piece++;
          at = 0;
        }
        if (piece < pieces.length) {
          const bytes = pieces[piece]!;
          const end = Math.min(at + SLICE_BYTES, bytes.byteLength);
          controller.enqueue(bytes.subarray(at, end));
          at = end;
          while (piece < pieces.length && at === pieces[piece]!.byteLength) {
            piece++;
            at = 0;
          }
        }
        if (piece === pieces.length) {
          controller.close();
          release();
        }
      },
      cancel: release,
    }, { highWaterMark: 0 });
  }

  #add(tenant: string, bytes: number): void {
    this.#total += bytes;
    const held = (this.#held.get(tenant) ?? 0) + bytes;
    if (held > 0) this.#held.set(tenant, held);
    else this.#held.delete(tenant);
  }
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
