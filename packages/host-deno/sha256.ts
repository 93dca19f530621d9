/**
 * SHA-256 of big inputs without holding the calling thread: WebCrypto's
 * `digest` copies its whole input on the calling thread first (about 26 ms
 * for 60 MiB), and a 64 MiB upload is hashed more than once on the thread
 * that answers every tenant's events. This hashes a mebibyte at a time, with
 * a turn of the event loop in between.
 *
 * @module
 */
import { sha256Hex } from "../core/bytes.ts";

/** Bytes hashed between two turns of the loop. */
const PIECE_BYTES = 1024 * 1024;

/** Lowercase hex SHA-256 of `bytes`, as `sha256Hex`, a mebibyte per turn of the loop. */
export async function sha256HexInPieces(bytes: Uint8Array): Promise<string> {
  if (bytes.byteLength <= PIECE_BYTES) return await sha256Hex(bytes);
  // Loaded here, not at start: Deno's Node layer costs a one-shot hook command ~19 ms to load.
  const { createHash } = await import("node:crypto");
  const hash = createHash("sha256");
  for (let at = 0; at < bytes.byteLength; at += PIECE_BYTES) {
    if (at > 0) await new Promise((resolve) => setTimeout(resolve, 0));
    hash.update(bytes.subarray(at, at + PIECE_BYTES));
  }
  return hash.digest("hex");
}
