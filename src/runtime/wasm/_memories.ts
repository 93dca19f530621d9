/**
 * Memories for fresh instances of plugins that import theirs. Allocating a
 * new 1 MiB linear memory and faulting its pages in is most of what a fresh
 * QuickJS instance costs (about 650 µs of 700 on this machine); zeroing one
 * the process already has costs about 16 µs. A memory comes back only at its
 * initial size (one that grew stays with its instance and is dropped), is
 * zeroed at once — outside the ranges the plugin's active data segments
 * cover, when the loader knows them: the next instantiation writes those
 * before any guest code runs — and is handed to the next fresh instance of
 * the same plugin, whose data segments are then written into it as into a
 * new one: the instance cannot tell it from a new memory.
 *
 * @module
 */
import type { LoadedPlugin } from "./_loader.ts";

/** Zeroed memories kept per plugin. */
const KEPT_PER_PLUGIN = 4;
const PAGE = 65536;
/** Most data ranges skipped one by one when a memory is zeroed. */
const MAX_RANGES = 256;

/**
 * Zeroes `bytes` except inside `ranges` (sorted, disjoint): the bytes the
 * next instantiation writes over anyway with the plugin's data segments.
 */
function zeroOutside(bytes: Uint8Array, ranges: readonly (readonly [number, number])[]): void {
  // Many small ranges: one fill is cheaper (the rewriter reports at most 256,
  // MAX_DATA_RANGES; metadata from elsewhere — a bundle, a disk cache — may not).
  if (ranges.length > MAX_RANGES) return void bytes.fill(0);
  let at = 0;
  for (const [from, to] of ranges) {
    if (from > at) bytes.fill(0, at, Math.min(from, bytes.length));
    at = Math.max(at, to);
  }
  if (at < bytes.length) bytes.fill(0, at);
}

/** A pool of zeroed memories, per loaded plugin. */
export class MemoryPool {
  #free = new WeakMap<LoadedPlugin, WebAssembly.Memory[]>();

  /** A zeroed memory of the plugin's initial size: kept, or new. */
  take(loaded: LoadedPlugin): WebAssembly.Memory {
    const limits = loaded.memoryImport!;
    return this.#free.get(loaded)?.pop() ??
      new WebAssembly.Memory({ initial: limits.min, maximum: limits.max });
  }

  /** Gives back the memory of a finished fresh instance: zeroed and kept, or dropped. */
  give(loaded: LoadedPlugin, memory: WebAssembly.Memory): void {
    if (memory.buffer.byteLength !== loaded.memoryImport!.min * PAGE) return;
    let free = this.#free.get(loaded);
    if (free === undefined) this.#free.set(loaded, free = []);
    if (free.length >= KEPT_PER_PLUGIN) return;
    zeroOutside(new Uint8Array(memory.buffer), loaded.dataRanges ?? []);
    free.push(memory);
  }

  /** Drops every kept memory. */
  clear(): void {
    this.#free = new WeakMap();
  }
}
