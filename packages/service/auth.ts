/**
 * API keys: 256 random bits, shown once, stored as their SHA-256; the admin
 * key is compared by hash in constant time.
 *
 * @module
 */

const encoder = new TextEncoder();

/** Hex SHA-256 of a key. */
export async function hashKey(key: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", encoder.encode(key));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** A new key: `hbk_` and 43 base64url characters (256 bits). */
export function newKey(): string {
  return `hbk_${base64url(crypto.getRandomValues(new Uint8Array(32)))}`;
}

/**
 * A new id (`key_…`, `req_…`, decision ids): the time in milliseconds as 12
 * hex digits, then 80 random bits. Ids made later sort later, so the audit's
 * unique index on `decision_id` grows at one end instead of dirtying a random
 * page per row (a commit of a batch writes ~2.5× fewer WAL pages).
 */
export function newId(prefix: string, now: number = Date.now()): string {
  const time = Math.max(0, Math.floor(now)).toString(16).padStart(12, "0");
  return `${prefix}_${time}${randomText(10)}`;
}

/** Random bytes drawn ahead, so an id costs no call into the system's generator. */
const pool = new Uint8Array(4096);
let poolAt = pool.length;
const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** `bytes` fresh random bytes (each drawn once) as unpadded base64url. */
function randomText(bytes: number): string {
  if (poolAt + bytes > pool.length) {
    crypto.getRandomValues(pool);
    poolAt = 0;
  }
  let text = "";
  for (let i = 0; i < bytes; i += 3) {
    const n = bytes - i;
    const word = (pool[poolAt + i]! << 16) | ((n > 1 ? pool[poolAt + i + 1]! : 0) << 8) |
      (n > 2 ? pool[poolAt + i + 2]! : 0);
    text += BASE64URL[word >>> 18]! + BASE64URL[(word >>> 12) & 63]!;
    if (n > 1) text += BASE64URL[(word >>> 6) & 63]!;
    if (n > 2) text += BASE64URL[word & 63]!;
  }
  poolAt += bytes;
  return text;
}

/** True when the hex digests `a` and `b` are equal, in time independent of where they differ. */
export function sameDigest(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** The key in `Authorization: Bearer KEY`, or null. */
export function bearer(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer[ ]+([A-Za-z0-9_\-.~+/=]{1,256})$/.exec(header.trim());
  return match ? match[1]! : null;
}

function base64url(bytes: Uint8Array): string {
  let text = "";
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text).replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "");
}
