/**
 * Warm instances per (tenant, hook, instrumented SHA-256): up to
 * {@linkcode MAX_WARM_PER_KEY} of them, so concurrent calls of one hook each
 * get a warm instance instead of instantiating a throw-away one. An instance
 * is never shared while busy; a failed one is closed and forgotten.
 *
 * @module
 */
import type { PluginInstance } from "./_instance.ts";

/** Warm instances kept per key (each holds its plugin's memory). */
export const MAX_WARM_PER_KEY = 4;

interface Entry {
  idle: PluginInstance[];
  /** Instances of this key that exist, idle or busy. */
  count: number;
}

/** Keyed warm instances. */
export class WarmPool {
  readonly #entries = new Map<string, Entry>();

  /**
   * An idle instance for `key`, marked busy; null when the caller should
   * create one (and {@linkcode add} it); "busy" when the key already has its
   * maximum of instances, all in use (the caller runs a throw-away one).
   */
  acquire(key: string): PluginInstance | null | "busy" {
    const entry = this.#entries.get(key);
    if (entry === undefined) return null;
    const instance = entry.idle.pop();
    if (instance !== undefined) {
      instance.busy = true;
      return instance;
    }
    return entry.count >= MAX_WARM_PER_KEY ? "busy" : null;
  }

  /** Adds a freshly created instance, marked busy. */
  add(key: string, instance: PluginInstance): void {
    instance.busy = true;
    let entry = this.#entries.get(key);
    if (entry === undefined) this.#entries.set(key, entry = { idle: [], count: 0 });
    entry.count++;
  }

  /** Returns an instance after a call; a failed one is dropped and closed. */
  async release(key: string, instance: PluginInstance): Promise<void> {
    instance.busy = false;
    const entry = this.#entries.get(key);
    if (instance.reusable && entry !== undefined) {
      entry.idle.push(instance);
      return;
    }
    if (entry !== undefined) {
      entry.count--;
      if (entry.count <= 0) this.#entries.delete(key);
    }
    await instance.close();
  }

  /** Closes every idle instance (busy ones are closed by their calls). */
  async close(): Promise<void> {
    const all = [...this.#entries.values()].flatMap((e) => e.idle);
    this.#entries.clear();
    await Promise.all(all.map((instance) => instance.close()));
  }
}
