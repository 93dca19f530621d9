/**
 * Reading untrusted byte streams with a cap: a body, a decompressed archive,
 * an HTTP answer. Web APIs only.
 *
 * @module
 */

/** The stream's bytes, or null when they pass `max` (the rest is not read). */
export async function readCapped(
  stream: ReadableStream<Uint8Array> | null,
  max: number,
): Promise<Uint8Array | null> {
  if (stream === null) return new Uint8Array(0);
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  return concatBytes(chunks, total);
}

/** `chunks` joined into one array of `size` bytes. */
export function concatBytes(chunks: readonly Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

/**
 * The bytes of standard base64 text; throws a `SyntaxError` on anything else.
 * Uses `Uint8Array.fromBase64` where the runtime has it; the fallback still
 * avoids `Uint8Array.from(text, mapFn)`, which takes about 100 ms per MB.
 */
export function base64Bytes(text: string): Uint8Array {
  const native = (Uint8Array as unknown as { fromBase64?: (s: string) => Uint8Array }).fromBase64;
  if (native) return native(text);
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

/** Standard base64 of bytes (the inverse of {@linkcode base64Bytes}). */
export function bytesBase64(bytes: Uint8Array): string {
  const native = (bytes as unknown as { toBase64?: () => string }).toBase64;
  if (native) return native.call(bytes);
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(text);
}

/** Lowercase hex SHA-256 of bytes, or of a string as UTF-8 (hookbox's one SHA-256 helper). */
export async function sha256Hex(data: Uint8Array | string): Promise<string> {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>),
  );
  let hex = "";
  for (const byte of digest) hex += byte.toString(16).padStart(2, "0");
  return hex;
}

/** Texts {@linkcode sha256HexOf} hashed, with their hashes; the oldest go past 1,024. */
const hashedTexts = new Map<string, Promise<string>>();

/**
 * {@linkcode sha256Hex} of a short text, worked out once per process: for
 * cache names a long-lived process (the daemon) asks for again on every call.
 */
export function sha256HexOf(text: string): Promise<string> {
  let hash = hashedTexts.get(text);
  if (hash === undefined) {
    if (hashedTexts.size >= 1024) hashedTexts.delete(hashedTexts.keys().next().value!);
    hash = sha256Hex(text);
    hashedTexts.set(text, hash);
  }
  return hash;
}
