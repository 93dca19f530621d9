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
import type { LoadedPlugin } from "../_loader.ts";

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

/**
 * Largest memory pooled, bytes: zeroing runs on the thread that gave the
 * memory back, outside any call's budget, so a plugin with a 256 MiB initial
 * memory it never touched cost seconds per call; a new memory's pages come
 * zeroed from the system for free instead.
 */
export const MAX_POOLED_MEMORY = 8 * 1024 * 1024;

/**
 * A pool of zeroed memories, per loaded plugin, holding at most `maxBytes`
 * in all (the runtime gives it a share of `warmBytes`; 0 pools nothing).
 * The least recently given plugin's memories go first.
 */
export class MemoryPool {
  #free = new Map<LoadedPlugin, WebAssembly.Memory[]>();
  #bytes = 0;

  constructor(readonly maxBytes: number) {}

  /** Bytes of the memories kept now. */
  get bytes(): number {
    return this.#bytes;
  }

  /** A zeroed memory of the plugin's initial size: kept, or new. */
  take(loaded: LoadedPlugin): WebAssembly.Memory {
    const limits = loaded.memoryImport!;
    const kept = this.#free.get(loaded)?.pop();
    if (kept !== undefined) {
      this.#bytes -= counted(kept);
      return kept;
    }
    return new WebAssembly.Memory({ initial: limits.min, maximum: limits.max });
  }

  /** Gives back the memory of a finished fresh instance: zeroed and kept, or dropped. */
  give(loaded: LoadedPlugin, memory: WebAssembly.Memory): void {
    const length = memory.buffer.byteLength;
    if (length !== loaded.memoryImport!.min * PAGE || length > MAX_POOLED_MEMORY) return;
    const size = counted(memory);
    if (size > this.maxBytes) return;
    let free = this.#free.get(loaded);
    if (free !== undefined && free.length >= KEPT_PER_PLUGIN) return;
    while (this.#bytes + size > this.maxBytes) this.#dropOldest();
    zeroOutside(new Uint8Array(memory.buffer), loaded.dataRanges ?? []);
    if (free === undefined) free = [];
    // Re-inserted last: the map's order is least recently given first.
    this.#free.delete(loaded);
    this.#free.set(loaded, free);
    free.push(memory);
    this.#bytes += size;
  }

  /**
   * Drops the memories kept for `loaded`, and its key (a plugin the runtime
   * lets go: the key, even with an emptied list, would hold it, module and all).
   */
  forget(loaded: LoadedPlugin): void {
    const memories = this.#free.get(loaded);
    if (memories === undefined) return;
    this.#free.delete(loaded);
    for (const m of memories) this.#bytes -= counted(m);
  }

  /** Drops every kept memory. */
  clear(): void {
    this.#free = new Map();
    this.#bytes = 0;
  }

  #dropOldest(): void {
    const [plugin, memories] = this.#free.entries().next().value!;
    this.#free.delete(plugin);
    for (const m of memories) this.#bytes -= counted(m);
  }
}

/** What a kept memory counts: an empty one holds mappings too (MIN_INSTANCE_BYTES), so a page at least. */
function counted(memory: WebAssembly.Memory): number {
  return Math.max(memory.buffer.byteLength, PAGE);
}
