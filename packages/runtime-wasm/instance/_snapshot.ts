/**
 * Warm isolation: a copy of an instance's linear memory and exported mutable
 * globals taken right after instantiation, written back before every call.
 *
 * When the module was instrumented with write tracking, the instance exports
 * a block map (`__hookbox_dirty`, one byte per 256-byte block) that the
 * guest's stores and the host's writes ({@linkcode markWritten}) set; only
 * marked blocks are restored, each with the first bytes of the next block a
 * straddling store may have reached, by the restorer module (`_restore.ts`)
 * reading the plugin's image from a memory of its own. Otherwise the whole
 * memory is copied back. Memory grown since the snapshot is zero-filled (wasm
 * memory cannot shrink).
 *
 * @module
 */

import {
  HOOKBOX_EXPORTS,
  WRITE_BLOCK_SHIFT as BLOCK_SHIFT,
  WRITE_STRADDLE as STRADDLE,
} from "../../rewriter/mod.ts";
import { type Restorer, restorerFor } from "./_restore.ts";
import type { ImageLayers } from "../_loader.ts";

/** Globals the host manages itself and never restores. */
const HOST_GLOBALS = new Set<string>([HOOKBOX_EXPORTS.fuel]);
const BLOCK = 1 << BLOCK_SHIFT;

/** The instance's block map, or null when its writes are not tracked. */
export function blockMap(instance: WebAssembly.Instance): Uint8Array | null {
  const map = blockMapMemory(instance);
  return map === null ? null : new Uint8Array(map.buffer);
}

function blockMapMemory(instance: WebAssembly.Instance): WebAssembly.Memory | null {
  const map = instance.exports[HOOKBOX_EXPORTS.blockMap];
  return map instanceof WebAssembly.Memory ? map : null;
}

const EMPTY = new Uint8Array(0);

/** What a layered snapshot restores from (see `Snapshot.#layered`). */
interface Layered {
  /** The memory's length at the snapshot. */
  length: number;
  /** Bytes of the shared base. */
  baseLength: number;
  /** The plugin's runs over the base. */
  runs: ImageLayers["runs"];
  /** The instance's block map. */
  map: Uint8Array;
}

/** A plugin's pristine memory, shared by the snapshots of its warm instances. */
export interface SnapshotImage {
  readonly bytes: Uint8Array;
  /** The same bytes in a memory of their own, for the restorer (tracked plugins). */
  readonly memory: WebAssembly.Memory | null;
  /** Snapshots using it (see {@linkcode Snapshot.release}). */
  users: number;
  /** Its last snapshot was released: its memory may be another plugin's image now. */
  released: boolean;
}

/** Makes a memory of `pages` (fixed size) for an image, e.g. from a pool. */
export type ImageMemoryFn = (pages: number) => WebAssembly.Memory;

/** Marks the pages of `[ptr, ptr + length)` written (a host write into guest memory). */
export function markWritten(map: Uint8Array, ptr: number, length: number): void {
  if (length <= 0) return;
  map.fill(1, ptr >>> BLOCK_SHIFT, ((ptr + length - 1) >>> BLOCK_SHIFT) + 1);
}

/** Pristine state of one instance. */
export class Snapshot {
  readonly #memory: WebAssembly.Memory | null;
  readonly #image: SnapshotImage;
  readonly #globals: [WebAssembly.Global, unknown][];
  readonly #restorer: Restorer | null;
  readonly #shared: boolean;
  /** Restoring from a shared base: the base's length, the plugin's runs over it and the map. */
  readonly #layers: Layered | null;
  #released = false;

  private constructor(
    memory: WebAssembly.Memory | null,
    image: SnapshotImage,
    globals: [WebAssembly.Global, unknown][],
    restorer: Restorer | null,
    shared: boolean,
    layers: Layered | null = null,
  ) {
    this.#memory = memory;
    this.#image = image;
    this.#globals = globals;
    this.#restorer = restorer;
    this.#shared = shared;
    this.#layers = layers;
  }

  /** Bytes this snapshot holds of its own (0 when it shares an image with other instances). */
  get byteLength(): number {
    return this.#shared ? 0 : this.#image.bytes.byteLength;
  }

  /**
   * The instance's memory is larger than when the snapshot was taken. Memory
   * cannot shrink, and the guest's allocator state written back by a restore
   * describes the old size: it would grow the memory again on the next call,
   * leaving the grown pages unused, call after call, up to the cap. Such an
   * instance is not reused.
   */
  get grown(): boolean {
    const saved = this.#layers?.length ?? this.#image.bytes.length;
    return this.#memory !== null && this.#memory.buffer.byteLength > saved;
  }

  /** The memory image, to share with the next instance of the same module. */
  get image(): SnapshotImage {
    return this.#image;
  }

  /**
   * Captures memory and every exported mutable global of `instance`; clears
   * its block map. Every instance of one module starts from the same memory,
   * so `image` (another instance's) is reused instead of copied — but only
   * when the memory is byte for byte equal to it. With a block map and the
   * restorer module, calls restore only the blocks they wrote; without the
   * module, the whole memory.
   */
  static take(
    instance: WebAssembly.Instance,
    image: SnapshotImage | null = null,
    restoreModule: WebAssembly.Module | null = null,
    newImage: ImageMemoryFn | null = null,
    layers: ImageLayers | null = null,
  ): Snapshot {
    const exports = instance.exports;
    const exported = exports[HOOKBOX_EXPORTS.memory];
    const memory = exported instanceof WebAssembly.Memory ? exported : null;
    const live = memory === null ? new Uint8Array(0) : new Uint8Array(memory.buffer);
    const map = memory === null || restoreModule === null ? null : blockMapMemory(instance);
    if (layers !== null && map !== null) {
      return Snapshot.#layered(instance, memory!, map, restoreModule!, layers);
    }
    const shared = image !== null && !image.released && (map === null || image.memory !== null) &&
      sameBytes(live, image.bytes);
    const own = shared
      ? image
      : map === null
      ? { bytes: live.slice(), memory: null, users: 0, released: false }
      : imageMemory(live, newImage);
    own.users++;
    const globals = mutableGlobals(exports);
    let restorer: Restorer | null = null;
    if (map !== null && own.memory !== null) {
      new Uint8Array(map.buffer).fill(0);
      restorer = restorerFor(restoreModule!, memory!, map, own.memory);
    }
    return new Snapshot(memory, own, globals, restorer, shared);
  }

  /**
   * The snapshot of an instance whose memory started as exactly its plugin's
   * image, `layers` (a base shared by the module's plugins, and the plugin's
   * runs over it): nothing is copied. A restore copies the marked blocks back
   * from the base, then writes again each of the plugin's runs that a
   * restored block overlaps (the restorer covers a marked block and the
   * first bytes of the next, so a run is written again when the block before
   * its first one or any of its own is marked).
   */
  static #layered(
    instance: WebAssembly.Instance,
    memory: WebAssembly.Memory,
    map: WebAssembly.Memory,
    restoreModule: WebAssembly.Module,
    layers: ImageLayers,
  ): Snapshot {
    const length = memory.buffer.byteLength;
    const globals = mutableGlobals(instance.exports);
    const marks = new Uint8Array(map.buffer);
    marks.fill(0);
    const restorer = restorerFor(restoreModule, memory, map, layers.base);
    // The image counts nothing of its own: the base is shared and the runs are the plugin's.
    const image = { bytes: EMPTY, memory: null, users: 1, released: false };
    return new Snapshot(memory, image, globals, restorer, true, {
      length,
      baseLength: layers.baseLength,
      runs: layers.runs,
      map: marks,
    });
  }

  /**
   * The instance is closed: this snapshot no longer uses its image. Returns
   * the image's memory when no snapshot uses it any more (to pool: the
   * caller may hand it to another plugin's snapshot, which writes it whole),
   * else null. Once only.
   */
  release(): WebAssembly.Memory | null {
    if (this.#released) return null;
    this.#released = true;
    const image = this.#image;
    if (--image.users > 0 || image.memory === null) return null;
    image.released = true;
    return image.memory;
  }

  /** Writes the captured state back. */
  restore(): void {
    if (this.#layers !== null) return this.#restoreLayers(this.#layers);
    if (this.#memory !== null) {
      const length = this.#memory.buffer.byteLength;
      const saved = this.#image.bytes.length;
      if (this.#restorer !== null) {
        this.#restorer(Math.ceil(length / BLOCK), BLOCK_SHIFT, STRADDLE, saved, length);
      } else {
        const live = new Uint8Array(this.#memory.buffer);
        live.set(this.#image.bytes);
        if (length > saved) live.fill(0, saved);
      }
    }
    for (const [global, value] of this.#globals) global.value = value;
  }

  #restoreLayers(layers: Layered): void {
    const memory = this.#memory!;
    const length = memory.buffer.byteLength;
    const { map, runs } = layers;
    // Before the restorer clears the marks: the runs a restored block overlaps.
    const again: (readonly [number, Uint8Array])[] = [];
    for (const run of runs) {
      const [at, bytes] = run;
      const from = Math.max(0, (at >>> BLOCK_SHIFT) - 1);
      const to = ((at + bytes.byteLength - 1) >>> BLOCK_SHIFT) + 1;
      if (map.subarray(from, to).includes(1)) again.push(run);
    }
    this.#restorer!(Math.ceil(length / BLOCK), BLOCK_SHIFT, STRADDLE, layers.baseLength, length);
    if (again.length > 0) {
      const live = new Uint8Array(memory.buffer);
      for (const [at, bytes] of again) live.set(bytes, at);
    }
    for (const [global, value] of this.#globals) global.value = value;
  }
}

/** The exported mutable globals of `exports` and their values now. */
function mutableGlobals(exports: WebAssembly.Exports): [WebAssembly.Global, unknown][] {
  const globals: [WebAssembly.Global, unknown][] = [];
  for (const [name, value] of Object.entries(exports)) {
    if (value instanceof WebAssembly.Global && !HOST_GLOBALS.has(name) && isMutable(value)) {
      globals.push([value, value.value]);
    }
  }
  return globals;
}

/** `live` copied into a memory of its own (its length is whole wasm pages). */
function imageMemory(live: Uint8Array, newImage: ImageMemoryFn | null): SnapshotImage {
  const pages = live.byteLength / 65536;
  let memory = newImage?.(pages) ?? null;
  if (memory === null || memory.buffer.byteLength !== live.byteLength) {
    memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
  }
  const bytes = new Uint8Array(memory.buffer);
  bytes.set(live);
  return { bytes, memory, users: 0, released: false };
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  const words = a.byteLength >>> 3;
  const a64 = new BigUint64Array(a.buffer, a.byteOffset, words);
  const b64 = new BigUint64Array(b.buffer, b.byteOffset, words);
  for (let i = 0; i < words; i++) if (a64[i] !== b64[i]) return false;
  for (let i = words << 3; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}

function isMutable(global: WebAssembly.Global): boolean {
  try {
    const value = global.value;
    global.value = value;
    return true;
  } catch {
    return false;
  }
}
