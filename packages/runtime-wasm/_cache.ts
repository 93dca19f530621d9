/**
 * Content-addressed caches: compiled modules keyed by the SHA-256 of the
 * bytes they were compiled from (`sha256Hex` lives in `packages/core/bytes.ts`).
 *
 * @module
 */

export { sha256Hex } from "../core/bytes.ts";

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
