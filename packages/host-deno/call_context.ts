/**
 * Values that follow one call through its awaits, for a process answering
 * several calls at once (the user's daemon: each call's stdin, folder and
 * building time). They are `AsyncLocalStorage`s, made once the process turns
 * them on with {@linkcode enableCallContexts}: loading `node:async_hooks`
 * costs about 9 ms of start-up (Deno's Node layer), which a one-shot hook
 * command, answering one call, never needs. Until then a context holds
 * nothing, and running a call in one is an error.
 *
 * @module
 */

/** What a context needs of `AsyncLocalStorage`: a value per call, and running a call with one. */
export interface Storage<T> {
  /** The value of the call under way. */
  getStore(): T | undefined;
  /** Runs `fn` as a call whose value is `store`. */
  run<R>(store: T, fn: () => R): R;
}

/** `AsyncLocalStorage` (from `node:async_hooks`), passed in by the process that needs it. */
export type StorageClass = new <T>() => Storage<T>;

let maker: StorageClass | null = null;
const contexts: CallContext<unknown>[] = [];

/** A value per call (see the module doc). */
export class CallContext<T> {
  #storage: Storage<T> | null = null;

  constructor() {
    if (maker !== null) this.#storage = new maker<T>();
    else contexts.push(this as CallContext<unknown>);
  }

  /** The value of the call under way; undefined outside one, or before contexts are on. */
  getStore(): T | undefined {
    return this.#storage?.getStore();
  }

  /** Runs `fn` as a call whose value is `value`. */
  run<R>(value: T, fn: () => R): R {
    if (this.#storage === null) {
      throw new Error("call contexts are off in this process: enableCallContexts() first");
    }
    return this.#storage.run(value, fn);
  }

  /** Makes this context's storage (once). */
  enable(storage: StorageClass): void {
    this.#storage ??= new storage<T>();
  }
}

/** Turns call contexts on in this process, with `AsyncLocalStorage` from `node:async_hooks`. */
export function enableCallContexts(storage: StorageClass): void {
  maker ??= storage;
  for (const context of contexts.splice(0)) context.enable(storage);
}
