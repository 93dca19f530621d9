/**
 * Warm instances, one per (tenant, hook, instrumented SHA-256). A busy or
 * failed instance is never shared: a concurrent call gets a throw-away
 * instance, a failed one is closed and forgotten.
 *
 * @module
 */
import type { PluginInstance } from "./_instance.ts";

/** Keyed warm instances. */
export class WarmPool {
  readonly #instances = new Map<string, PluginInstance>();

  /** The idle instance for `key`, marked busy; null when there is none or it is in use. */
  acquire(key: string): PluginInstance | null | "busy" {
    const instance = this.#instances.get(key);
    if (instance === undefined) return null;
    if (instance.busy) return "busy";
    instance.busy = true;
    return instance;
  }

  /** Adds a freshly created instance, marked busy. */
  add(key: string, instance: PluginInstance): void {
    instance.busy = true;
    this.#instances.set(key, instance);
  }

  /** Returns an instance after a call; a failed one is dropped and closed. */
  async release(key: string, instance: PluginInstance): Promise<void> {
    instance.busy = false;
    if (instance.reusable) return;
    if (this.#instances.get(key) === instance) this.#instances.delete(key);
    await instance.close();
  }

  /** Closes every instance. */
  async close(): Promise<void> {
    const all = [...this.#instances.values()];
    this.#instances.clear();
    await Promise.all(all.map((instance) => instance.close()));
  }
}
