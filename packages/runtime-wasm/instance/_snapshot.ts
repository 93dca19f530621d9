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
  #released = false;

  private constructor(
    memory: WebAssembly.Memory | null,
    image: SnapshotImage,
    globals: [WebAssembly.Global, unknown][],
    restorer: Restorer | null,
    shared: boolean,
  ) {
    this.#memory = memory;
    this.#image = image;
    this.#globals = globals;
    this.#restorer = restorer;
    this.#shared = shared;
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
    return this.#memory !== null && this.#memory.buffer.byteLength > this.#image.bytes.length;
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
  ): Snapshot {
    const exports = instance.exports;
    const exported = exports[HOOKBOX_EXPORTS.memory];
    const memory = exported instanceof WebAssembly.Memory ? exported : null;
    const live = memory === null ? new Uint8Array(0) : new Uint8Array(memory.buffer);
    const map = memory === null || restoreModule === null ? null : blockMapMemory(instance);
    const shared = image !== null && !image.released && (map === null || image.memory !== null) &&
      sameBytes(live, image.bytes);
    const own = shared
      ? image
      : map === null
      ? { bytes: live.slice(), memory: null, users: 0, released: false }
      : imageMemory(live, newImage);
    own.users++;
    const globals: [WebAssembly.Global, unknown][] = [];
    for (const [name, value] of Object.entries(exports)) {
      if (value instanceof WebAssembly.Global && !HOST_GLOBALS.has(name) && isMutable(value)) {
        globals.push([value, value.value]);
      }
    }
    let restorer: Restorer | null = null;
    if (map !== null && own.memory !== null) {
      new Uint8Array(map.buffer).fill(0);
      restorer = restorerFor(restoreModule!, memory!, map, own.memory);
    }
    return new Snapshot(memory, own, globals, restorer, shared);
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
