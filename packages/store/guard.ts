/**
 * The store's contract (see `Store` in `store/store.ts`): a method rejects
 * only when the store itself fails. {@linkcode guarded} makes that visible
 * to the service: every rejection but a `HookboxError` (a bad cursor, say)
 * becomes a {@linkcode StoreUnavailable}, which the API answers as `503
 * STORE_UNAVAILABLE` — a lost PostgreSQL connection, a locked or full SQLite
 * file — instead of `500 INTERNAL`. Synchronous throws become rejections.
 *
 * @module
 */
import { isHookboxError } from "../core/errors.ts";
import { type Store, StoreUnavailable, VersionRefused } from "./store.ts";

export { StoreUnavailable };

/** `store` with every method's failure turned into a {@linkcode StoreUnavailable}. */
export function guarded(store: Store): Store {
  const wrapped: Record<string, unknown> = { kind: store.kind };
  for (const [name, fn] of Object.entries(store)) {
    if (typeof fn !== "function") continue;
    wrapped[name] = async (...args: unknown[]) => {
      try {
        return await fn.apply(store, args);
      } catch (err) {
        throw isHookboxError(err) || err instanceof StoreUnavailable ||
            err instanceof VersionRefused
          ? err
          : new StoreUnavailable(err);
      }
    };
  }
  return wrapped as unknown as Store;
}
