/**
 * SHA-256 helpers for the JS compiler's caches (Web Crypto only).
 *
 * @module
 */

/** Lower-case hex SHA-256 of a string (as UTF-8) or bytes. */
export async function sha256Hex(data: string | Uint8Array): Promise<string> {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  const digest = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}
