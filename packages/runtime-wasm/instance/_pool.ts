/**
 * Warm instances per (tenant, hook, instrumented SHA-256): up to
 * {@linkcode MAX_WARM_PER_KEY} of them, so concurrent calls of one hook each
 * get a warm instance instead of instantiating a throw-away one. An instance
 * is never shared while busy; a failed one is closed and forgotten. What idle
 * instances hold (memory plus snapshot) is capped in bytes (an edge isolate
 * has 128 MB for everything; 150 tenants' warm JS hooks must not add up past
 * it). Past the cap, the instance closed is the least recently used of the
 * tenant whose idle instances hold the most: one tenant's big memories close
 * its own instances, never every other tenant's. A key begins with its
 * tenant's id and a NUL (a key without one is a tenant of its own).
 *
 * @module
 */
import type { PluginInstance } from "./_instance.ts";

/** Warm instances kept per key (each holds its plugin's memory). */
export const MAX_WARM_PER_KEY = 4;

/** Default cap on the bytes idle warm instances hold. */
export const WARM_POOL_BYTES = 256 * 1024 * 1024;

/**
 * What an idle instance counts against the cap at the least, bytes. Each
 * memory an engine makes holds address space and kernel mappings whatever
 * its size: a process has about 65,000 mappings (Linux `vm.max_map_count`),
 * and V8 ends the process when it cannot map a memory (about 32,000 live
 * memories). Instances of empty memories counted 0 and were kept without
 * number.
 */
export const MIN_INSTANCE_BYTES = 64 * 1024;

/**
 * Idle instances a process keeps at most (each may hold two memories), shared
 * out among the runtimes of its threads (`WarmPool`'s `maxCount`), whatever
 * `warmBytes` allows.
 */
export const MAX_IDLE_INSTANCES = 8_192;

/** The part of a plugin instance the pool needs. */
export type Pooled = Pick<PluginInstance, "busy" | "reusable" | "byteLength" | "close">;

interface Entry<T> {
  /** The tenant the key belongs to (see {@linkcode ownerOf}), worked out once. */
  owner: string;
  idle: T[];
  /** Instances of this key that exist, idle or busy. */
  count: number;
}

/** Keyed warm instances. */
export class WarmPool<T extends Pooled = PluginInstance> {
  readonly #entries = new Map<string, Entry<T>>();
  /** Idle instances, least recently used first, with their key and size. */
  readonly #lru = new Map<T, { key: string; owner: string; bytes: number }>();
  /** Idle bytes per tenant. */
  readonly #owned = new Map<string, number>();
  readonly #maxBytes: number;
  readonly #maxCount: number;
  #idleBytes = 0;

  constructor(maxBytes: number = WARM_POOL_BYTES, maxCount: number = MAX_IDLE_INSTANCES) {
    this.#maxBytes = maxBytes;
    this.#maxCount = maxCount;
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
      this.#own(entry.owner, -(this.#lru.get(instance)?.bytes ?? 0));
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
    if (entry === undefined) {
      this.#entries.set(key, entry = { owner: ownerOf(key), idle: [], count: 0 });
    }
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
      const bytes = Math.max(instance.byteLength, MIN_INSTANCE_BYTES);
      this.#lru.set(instance, { key, owner: entry.owner, bytes });
      this.#own(entry.owner, bytes);
      // Nothing to wait for on the common path (no promise, no extra turn).
      return this.#over() ? this.#trim() : undefined;
    }
    this.#forget(key);
    return instance.close();
  }

  /** Closes every idle instance (busy ones are closed by their calls). */
  async close(): Promise<void> {
    const all = [...this.#entries.values()].flatMap((e) => e.idle);
    this.#entries.clear();
    this.#lru.clear();
    this.#owned.clear();
    this.#idleBytes = 0;
    await Promise.all(all.map((instance) => instance.close()));
  }

  async #trim(): Promise<void> {
    const closing: T[] = [];
    while (this.#over() && this.#lru.size > 0) {
      let heaviest = "", most = -1;
      for (const [owner, bytes] of this.#owned) {
        if (bytes > most) [heaviest, most] = [owner, bytes];
      }
      // Its least recently used idle instance (the map iterates oldest first).
      const before = closing.length;
      for (const [instance, { key, owner, bytes }] of this.#lru) {
        if (owner !== heaviest) continue;
        this.#lru.delete(instance);
        this.#own(owner, -bytes);
        const entry = this.#entries.get(key);
        if (entry !== undefined) entry.idle = entry.idle.filter((i) => i !== instance);
        this.#forget(key);
        closing.push(instance);
        break;
      }
      if (closing.length === before) break; // not reached: every idle byte has its tenant
    }
    await Promise.all(closing.map((instance) => instance.close()));
  }

  #over(): boolean {
    return this.#idleBytes > this.#maxBytes || this.#lru.size > this.#maxCount;
  }

  /** Counts `bytes` (negative: no longer) as idle, in all and for `owner`. */
  #own(owner: string, bytes: number): void {
    this.#idleBytes += bytes;
    const left = (this.#owned.get(owner) ?? 0) + bytes;
    if (left > 0) this.#owned.set(owner, left);
    else this.#owned.delete(owner);
  }

  #forget(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    entry.count--;
    if (entry.count <= 0) this.#entries.delete(key);
  }
}

/** The tenant a pool key belongs to: what comes before its first NUL. */
function ownerOf(key: string): string {
  const end = key.indexOf("\0");
  return end < 0 ? key : key.slice(0, end);
}
