/**
 * Reads that many concurrent requests make (which tenant owns this key, the
 * hooks generation), answered by one query per round instead of one each.
 *
 * A call never joins a query already sent: it waits for the next one, so it
 * sees every write committed before it was made — a key revoked or a hook
 * uploaded through another process is seen by the next request, exactly as
 * with one query per call. At most one query is in flight; calls made while
 * it runs go out together when it returns. A lone call is sent at once.
 *
 * @module
 */

/** Keys one query carries at most; more wait for the next round. */
const MAX_KEYS = 512;

interface Waiter<V> {
  resolve(value: V): void;
  reject(err: unknown): void;
}

/** One query per round for every key asked while the previous round ran. */
export class ReadCoalescer<K, V> {
  #waiting = new Map<K, Waiter<V>[]>();
  #busy = false;

  /** `read` answers a round: a function from each of its keys to its value. */
  constructor(private readonly read: (keys: K[]) => Promise<(key: K) => V>) {}

  /** The value of `key`, read by a query sent after this call. */
  get(key: K): Promise<V> {
    return new Promise((resolve, reject) => {
      let waiters = this.#waiting.get(key);
      if (waiters === undefined) this.#waiting.set(key, waiters = []);
      waiters.push({ resolve, reject });
      if (!this.#busy) void this.#round();
    });
  }

  async #round(): Promise<void> {
    this.#busy = true;
    const round = new Map<K, Waiter<V>[]>();
    for (const [key, waiters] of this.#waiting) {
      if (round.size === MAX_KEYS) break;
      round.set(key, waiters);
    }
    for (const key of round.keys()) this.#waiting.delete(key);
    try {
      const answer = await this.read([...round.keys()]);
      for (const [key, waiters] of round) {
        let value: V;
        try {
          value = answer(key);
        } catch (err) {
          for (const w of waiters) w.reject(err);
          continue;
        }
        for (const w of waiters) w.resolve(value);
      }
    } catch (err) {
      for (const waiters of round.values()) for (const w of waiters) w.reject(err);
    } finally {
      this.#busy = false;
      if (this.#waiting.size > 0) void this.#round();
    }
  }
}
