/**
 * Content-addressed caches: SHA-256 over Web Crypto, and compiled modules
 * keyed by the SHA-256 of the bytes they were compiled from.
 *
 * @module
 */

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

/** Turns bytes into a module; `sha256` lets edge bundles look up precompiled modules. */
export type CompileFn = (bytes: Uint8Array, sha256: string) => Promise<WebAssembly.Module>;

/** The default {@linkcode CompileFn}: `WebAssembly.compile`. */
export const compileBytes: CompileFn = (bytes) =>
  WebAssembly.compile(bytes as Uint8Array<ArrayBuffer>);

/** A bounded map of promises, oldest entry evicted first; rejected entries are dropped. */
export class PromiseCache<T> {
  readonly #entries = new Map<string, Promise<T>>();
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  /** The cached promise for `key`, or the one `make` starts. */
  get(key: string, make: () => Promise<T>): Promise<T> {
    const hit = this.#entries.get(key);
    if (hit !== undefined) return hit;
    const made = make();
    this.#entries.set(key, made);
    made.catch(() => {
      if (this.#entries.get(key) === made) this.#entries.delete(key);
    });
    if (this.#entries.size > this.#max) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    return made;
  }

  /** Forgets every entry. */
  clear(): void {
    this.#entries.clear();
  }
}
