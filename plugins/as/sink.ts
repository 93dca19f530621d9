// deno-fmt-ignore-file -- AssemblyScript source.
/**
 * A growable byte buffer in guest memory. Output is collected here while the
 * hook runs and written to the host once, when the call ends (see `flush`).
 */

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

  /** Address of the first byte written. */
  get dataStart(): usize {
    return changetype<usize>(this.data);
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
