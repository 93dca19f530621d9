/**
 * Memories for instances of plugins that import theirs. Allocating a
 * new 1 MiB linear memory and faulting its pages in is most of what a fresh
 * QuickJS instance costs (about 650 µs of 700 on this machine); zeroing one
 * the process already has costs about 16 µs. A memory comes back from a
 * closed instance (fresh after its call, warm when the warm pool lets it go)
 * only at its initial size (one that grew stays with its instance and is
 * dropped), is zeroed — at once, outside the ranges the plugin's active data
 * segments cover, when the loader knows them and only that plugin can take
 * it: the next instantiation writes those before any guest code runs; whole
 * when it is taken, when any plugin of a shared module can take it, unless
 * the taker's image writes every byte anyway (an edge bundle's: its base
 * copied whole) — and is handed to the next instance, whose data is then
 * written into it as into a new one: the instance cannot tell it from a new
 * memory. Block maps come back zeroed;
 * a warm snapshot's image memory comes back when no snapshot uses it, and is
 * written whole by the next one.
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
 * Where a plugin's memories are pooled: the plugin itself, or, for a plugin
 * whose module is shared (`shareCode`: its memory written by the host from
 * its image), the module and the memory's limits — any plugin of that module
 * with those limits can take a zeroed memory another one gave back (a
 * thousand tenants' JS hooks then reuse a few memories instead of each
 * allocating its own).
 */
type PoolKey = LoadedPlugin | string;

function keyOf(loaded: LoadedPlugin): PoolKey {
  const limits = loaded.memoryImport!;
  return loaded.image === undefined
    ? loaded
    : `${loaded.instrumentedSha256}:${limits.min}:${limits.max}`;
}

/** Memories kept per shared module and limits: every plugin of the module takes from them. */
const KEPT_PER_SHAPE = 16;

/**
 * A pool of zeroed memories, per loaded plugin (per shared module and limits,
 * see {@linkcode PoolKey}), holding at most `maxBytes` in all (the runtime
 * gives it a share of `warmBytes`; 0 pools nothing); with them, the block
 * maps of instances that import theirs (zeroed, by size) and the memories
 * warm snapshots keep their image in (by size, written whole before use).
 * The least recently given go first.
 */
export class MemoryPool {
  #free = new Map<PoolKey, WebAssembly.Memory[]>();
  #bytes = 0;

  constructor(readonly maxBytes: number) {}

  /** Bytes of the memories kept now. */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * A memory of the plugin's initial size, zeroed — or, when the plugin's
   * image overwrites every byte (`MemoryImage.overwrites`), possibly holding
   * what another plugin of its module left: kept, or new.
   */
  take(loaded: LoadedPlugin): WebAssembly.Memory {
    const limits = loaded.memoryImport!;
    const key = keyOf(loaded);
    const kept = this.#take(key);
    if (kept === undefined) {
      return new WebAssembly.Memory({ initial: limits.min, maximum: limits.max });
    }
    // Kept as given back (see `give`): zeroed now unless the image writes all of it anyway.
    if (typeof key === "string" && loaded.image?.overwrites !== true) {
      new Uint8Array(kept.buffer).fill(0);
    }
    return kept;
  }

  /** Gives back the memory of a finished instance: zeroed and kept, or dropped. */
  give(loaded: LoadedPlugin, memory: WebAssembly.Memory): void {
    const length = memory.buffer.byteLength;
    if (length !== loaded.memoryImport!.min * PAGE || length > MAX_POOLED_MEMORY) return;
    const key = keyOf(loaded);
    const kept = typeof key === "string" ? KEPT_PER_SHAPE : KEPT_PER_PLUGIN;
    // Kept as it is when any plugin of a shared module may take it: `take` zeroes it unless the
    // taker's image overwrites every byte. Zeroed outside the plugin's data otherwise.
    const clean = typeof key === "string"
      ? () => {}
      : (bytes: Uint8Array) => zeroOutside(bytes, loaded.dataRanges ?? []);
    this.#give(key, memory, kept, clean);
  }

  /** A zeroed block map of `pages` (fixed size): kept, or new. */
  takeMap(pages: number): WebAssembly.Memory {
    return this.#take(`map:${pages}`) ?? new WebAssembly.Memory({ initial: pages, maximum: pages });
  }

  /** Gives back a block map: zeroed and kept, or dropped. */
  giveMap(map: WebAssembly.Memory): void {
    const pages = map.buffer.byteLength / PAGE;
    this.#give(`map:${pages}`, map, KEPT_PER_SHAPE, (bytes) => bytes.fill(0));
  }

  /** A memory of `pages` (fixed size) for a snapshot's image; the caller writes all of it. */
  takeImage(pages: number): WebAssembly.Memory {
    return this.#take(`image:${pages}`) ??
      new WebAssembly.Memory({ initial: pages, maximum: pages });
  }

  /** Gives back an image memory no snapshot uses any more (not zeroed: it is written whole). */
  giveImage(image: WebAssembly.Memory): void {
    const pages = image.buffer.byteLength / PAGE;
    this.#give(`image:${pages}`, image, KEPT_PER_SHAPE, () => {});
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

  #take(key: PoolKey): WebAssembly.Memory | undefined {
    const kept = this.#free.get(key)?.pop();
    if (kept !== undefined) this.#bytes -= counted(kept);
    return kept;
  }

  #give(
    key: PoolKey,
    memory: WebAssembly.Memory,
    most: number,
    clean: (bytes: Uint8Array) => void,
  ): void {
    if (memory.buffer.byteLength > MAX_POOLED_MEMORY) return;
    const size = counted(memory);
    if (size > this.maxBytes) return;
    let free = this.#free.get(key);
    if (free !== undefined && free.length >= most) return;
    while (this.#bytes + size > this.maxBytes) this.#dropOldest();
    clean(new Uint8Array(memory.buffer));
    if (free === undefined) free = [];
    // Re-inserted last: the map's order is least recently given first.
    this.#free.delete(key);
    this.#free.set(key, free);
    free.push(memory);
    this.#bytes += size;
  }

  #dropOldest(): void {
    const [key, memories] = this.#free.entries().next().value!;
    this.#free.delete(key);
    for (const m of memories) this.#bytes -= counted(m);
  }
}

/** What a kept memory counts: an empty one holds mappings too (MIN_INSTANCE_BYTES), so a page at least. */
function counted(memory: WebAssembly.Memory): number {
  return Math.max(memory.buffer.byteLength, PAGE);
}
