/**
 * Warm instances per (tenant, hook, instrumented SHA-256): up to
 * {@linkcode MAX_WARM_PER_KEY} of them, so concurrent calls of one hook each
 * get a warm instance instead of instantiating a throw-away one. An instance
 * is never shared while busy; a failed one is closed and forgotten. What idle
 * instances hold (memory plus snapshot) is capped in bytes: past the cap the
 * least recently used idle ones are closed (an edge isolate has 128 MB for
 * everything; 150 tenants' warm JS hooks must not add up past it).
 *
 * @module
 */
import type { PluginInstance } from "./_instance.ts";

/** Warm instances kept per key (each holds its plugin's memory). */
export const MAX_WARM_PER_KEY = 4;

/** Default cap on the bytes idle warm instances hold. */
export const WARM_POOL_BYTES = 256 * 1024 * 1024;

/** The part of a plugin instance the pool needs. */
export type Pooled = Pick<PluginInstance, "busy" | "reusable" | "byteLength" | "close">;

interface Entry<T> {
  idle: T[];
  /** Instances of this key that exist, idle or busy. */
  count: number;
}

/** Keyed warm instances. */
export class WarmPool<T extends Pooled = PluginInstance> {
  readonly #entries = new Map<string, Entry<T>>();
  /** Idle instances, least recently used first, with their key and size. */
  readonly #lru = new Map<T, { key: string; bytes: number }>();
  readonly #maxBytes: number;
  #idleBytes = 0;

  constructor(maxBytes: number = WARM_POOL_BYTES) {
    this.#maxBytes = maxBytes;
  }

  /** Bytes the idle instances hold. */
  get idleBytes(): number {
    return this.#idleBytes;
  }

  /** Idle instances kept. */
  get idleCount(): number {
    return this.#lru.size;
  }

  /**
   * An idle instance for `key`, marked busy; null when the caller should
   * create one (and {@linkcode add} it); "busy" when the key already has its
   * maximum of instances, all in use (the caller runs a throw-away one).
   */
  acquire(key: string): T | null | "busy" {
    const entry = this.#entries.get(key);
    if (entry === undefined) return null;
    const instance = entry.idle.pop();
    if (instance !== undefined) {
      this.#idleBytes -= this.#lru.get(instance)?.bytes ?? 0;
      this.#lru.delete(instance);
      instance.busy = true;
      return instance;
    }
    return entry.count >= MAX_WARM_PER_KEY ? "busy" : null;
  }

  /** Adds a freshly created instance, marked busy. */
  add(key: string, instance: T): void {
    instance.busy = true;
    let entry = this.#entries.get(key);
    if (entry === undefined) this.#entries.set(key, entry = { idle: [], count: 0 });
    entry.count++;
  }

  /**
   * Returns an instance after a call; a failed one is dropped and closed, and
   * so are the least recently used idle ones while the idle bytes exceed the cap.
   */
  release(key: string, instance: T): Promise<void> | undefined {
    instance.busy = false;
    const entry = this.#entries.get(key);
    if (instance.reusable && entry !== undefined) {
      entry.idle.push(instance);
      const bytes = instance.byteLength;
      this.#lru.set(instance, { key, bytes });
      this.#idleBytes += bytes;
      // Nothing to wait for on the common path (no promise, no extra turn).
      return this.#idleBytes > this.#maxBytes ? this.#trim() : undefined;
    }
    this.#forget(key);
    return instance.close();
  }

  /** Closes every idle instance (busy ones are closed by their calls). */
  async close(): Promise<void> {
    const all = [...this.#entries.values()].flatMap((e) => e.idle);
    this.#entries.clear();
    this.#lru.clear();
    this.#idleBytes = 0;
    await Promise.all(all.map((instance) => instance.close()));
  }

  async #trim(): Promise<void> {
    const closing: T[] = [];
    for (const [instance, { key, bytes }] of this.#lru) {
      if (this.#idleBytes <= this.#maxBytes) break;
      this.#lru.delete(instance);
      this.#idleBytes -= bytes;
      const entry = this.#entries.get(key);
      if (entry !== undefined) entry.idle = entry.idle.filter((i) => i !== instance);
      this.#forget(key);
      closing.push(instance);
    }
    await Promise.all(closing.map((instance) => instance.close()));
  }

  #forget(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    entry.count--;
    if (entry.count <= 0) this.#entries.delete(key);
  }
}
