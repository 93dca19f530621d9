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
export class PromiseCache<T> implements ValueCache<T> {
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

/** What a cache of promised values offers its users (`get`). */
export interface ValueCache<T> {
  /** The value for `key`: the one made before, if still had, or the one `make` starts. */
  get(key: string, make: () => Promise<T>): Promise<T>;
}

/**
 * A cache that holds nothing alive: a value made is found again for as long
 * as something else keeps it (a kept plugin its module), and made anew once
 * it is gone. Loads under way are shared; a rejected one is forgotten.
 */
export class WeakCache<T extends object> implements ValueCache<T> {
  readonly #made = new Map<string, WeakRef<T>>();
  readonly #making = new Map<string, Promise<T>>();
  #pruneAt = 1024;

  get(key: string, make: () => Promise<T>): Promise<T> {
    const had = this.#made.get(key)?.deref();
    if (had !== undefined) return Promise.resolve(had);
    const pending = this.#making.get(key);
    if (pending !== undefined) return pending;
    const made = make();
    this.#making.set(key, made);
    made.then((value) => {
      this.#making.delete(key);
      this.#made.set(key, new WeakRef(value));
      // Names whose values are gone are dropped now and then, so the map stays small: when it
      // has doubled since the last look (a look costs what the map holds).
      if (this.#made.size > this.#pruneAt) {
        for (const [name, ref] of this.#made) {
          if (ref.deref() === undefined) this.#made.delete(name);
        }
        this.#pruneAt = Math.max(1024, 2 * this.#made.size);
      }
    }, () => this.#making.delete(key));
    return made;
  }

  /** Forgets every entry. */
  clear(): void {
    this.#made.clear();
    this.#making.clear();
  }
}
