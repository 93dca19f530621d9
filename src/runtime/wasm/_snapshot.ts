/**
 * Warm isolation: a copy of an instance's linear memory and exported mutable
 * globals taken right after instantiation, written back before every call.
 *
 * When the module was instrumented with write tracking, the instance exports
 * a page map (`__hookbox_dirty`, one byte per 4 KiB page) that the guest's
 * stores and the host's writes ({@linkcode markWritten}) set; only marked
 * pages are restored, each with the first bytes of the next page a straddling
 * store may have reached. Otherwise the whole memory is copied back. Memory
 * grown since the snapshot is zero-filled (wasm memory cannot shrink).
 *
 * @module
 */

import {
  HOOKBOX_EXPORTS,
  WRITE_PAGE_SHIFT as PAGE_SHIFT,
  WRITE_STRADDLE as STRADDLE,
} from "../../wasm/mod.ts";

/** Globals the host manages itself and never restores. */
const HOST_GLOBALS = new Set<string>([HOOKBOX_EXPORTS.fuel]);
const PAGE = 1 << PAGE_SHIFT;

/** The instance's page map, or null when its writes are not tracked. */
export function pageMap(instance: WebAssembly.Instance): Uint8Array | null {
  const map = instance.exports[HOOKBOX_EXPORTS.pageMap];
  return map instanceof WebAssembly.Memory ? new Uint8Array(map.buffer) : null;
}

/** Marks the pages of `[ptr, ptr + length)` written (a host write into guest memory). */
export function markWritten(map: Uint8Array, ptr: number, length: number): void {
  if (length <= 0) return;
  map.fill(1, ptr >>> PAGE_SHIFT, ((ptr + length - 1) >>> PAGE_SHIFT) + 1);
}

/** Pristine state of one instance. */
export class Snapshot {
  readonly #memory: WebAssembly.Memory | null;
  readonly #bytes: Uint8Array;
  readonly #globals: [WebAssembly.Global, unknown][];
  readonly #map: Uint8Array | null;
  readonly #shared: boolean;

  private constructor(
    memory: WebAssembly.Memory | null,
    bytes: Uint8Array,
    globals: [WebAssembly.Global, unknown][],
    map: Uint8Array | null,
    shared: boolean,
  ) {
    this.#memory = memory;
    this.#bytes = bytes;
    this.#globals = globals;
    this.#map = map;
    this.#shared = shared;
  }

  /** Bytes this snapshot holds of its own (0 when it shares an image with other instances). */
  get byteLength(): number {
    return this.#shared ? 0 : this.#bytes.byteLength;
  }

  /** The memory image, to share with the next instance of the same module. */
  get image(): Uint8Array {
    return this.#bytes;
  }

  /**
   * Captures memory and every exported mutable global of `instance`; clears
   * its page map. Every instance of one module starts from the same memory,
   * so `image` (another instance's) is reused instead of copied — but only
   * when the memory is byte for byte equal to it.
   */
  static take(instance: WebAssembly.Instance, image: Uint8Array | null = null): Snapshot {
    const exports = instance.exports;
    const exported = exports[HOOKBOX_EXPORTS.memory];
    const memory = exported instanceof WebAssembly.Memory ? exported : null;
    const live = memory === null ? new Uint8Array(0) : new Uint8Array(memory.buffer);
    const shared = image !== null && sameBytes(live, image);
    const bytes = shared ? image : live.slice();
    const globals: [WebAssembly.Global, unknown][] = [];
    for (const [name, value] of Object.entries(exports)) {
      if (value instanceof WebAssembly.Global && !HOST_GLOBALS.has(name) && isMutable(value)) {
        globals.push([value, value.value]);
      }
    }
    const map = memory === null ? null : pageMap(instance);
    map?.fill(0);
    return new Snapshot(memory, bytes, globals, map, shared);
  }

  /** Writes the captured state back. */
  restore(): void {
    if (this.#memory !== null) {
      const live = new Uint8Array(this.#memory.buffer);
      if (this.#map === null) this.#restoreAll(live);
      else this.#restoreMarked(live, this.#map);
    }
    for (const [global, value] of this.#globals) global.value = value;
  }

  #restoreAll(live: Uint8Array): void {
    live.set(this.#bytes);
    if (live.length > this.#bytes.length) live.fill(0, this.#bytes.length);
  }

  #restoreMarked(live: Uint8Array, map: Uint8Array): void {
    const marks = map.subarray(0, Math.ceil(live.length / PAGE));
    for (let page = marks.indexOf(1); page >= 0; page = marks.indexOf(1, page)) {
      let end = page + 1;
      while (end < marks.length && marks[end] !== 0) end++;
      this.#restoreRange(live, page * PAGE, Math.min(live.length, end * PAGE + STRADDLE));
      marks.fill(0, page, end);
      page = end;
    }
  }

  #restoreRange(live: Uint8Array, from: number, to: number): void {
    const saved = this.#bytes;
    if (from < saved.length) live.set(saved.subarray(from, Math.min(to, saved.length)), from);
    if (to > saved.length) live.fill(0, Math.max(from, saved.length), to);
  }
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
