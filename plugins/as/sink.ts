// deno-fmt-ignore-file -- AssemblyScript source.
/**
 * A growable byte buffer in guest memory. Output is collected here while the
 * hook runs and copied to the host once, when the call ends (see `flush`).
 */

import { alloc, store_u8, store_u64 } from "./kernel";

/** Bytes written so far to one stream (stdout or stderr). */
export class Sink {
  private data: ArrayBuffer = new ArrayBuffer(0);
  private used: i32 = 0;

  /** Number of bytes written. */
  get length(): i32 {
    return this.used;
  }

  /** Drops everything written (start of a call). */
  clear(): void {
    this.used = 0;
  }

  /** Appends `length` bytes starting at guest address `ptr`. */
  append(ptr: usize, length: i32): void {
    if (length <= 0) return;
    this.reserve(this.used + length);
    memory.copy(changetype<usize>(this.data) + <usize>this.used, ptr, <usize>length);
    this.used += length;
  }

  /** Copies the bytes into a fresh host block; returns its address. */
  toHost(): u64 {
    const length = this.used;
    const base = changetype<usize>(this.data);
    const address = alloc(<u64>length);
    let i = 0;
    for (; i + 8 <= length; i += 8) {
      store_u64(address + <u64>i, load<u64>(base + <usize>i));
    }
    for (; i < length; i++) {
      store_u8(address + <u64>i, load<u8>(base + <usize>i));
    }
    return address;
  }

  private reserve(needed: i32): void {
    const capacity = this.data.byteLength;
    if (needed <= capacity) return;
    let next = capacity < 256 ? 256 : capacity << 1;
    while (next < needed) next <<= 1;
    const grown = new ArrayBuffer(next);
    memory.copy(changetype<usize>(grown), changetype<usize>(this.data), <usize>this.used);
    this.data = grown;
  }
}
