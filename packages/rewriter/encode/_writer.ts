/**
 * Growable byte buffer with the LEB128 encodings the rewriter needs.
 *
 * @module
 */

/** Appends bytes to a growing buffer. */
export class Writer {
  #buf: Uint8Array<ArrayBuffer> = new Uint8Array(1024);
  #len = 0;

  /** Bytes written so far. */
  get length(): number {
    return this.#len;
  }

  #reserve(n: number): void {
    if (this.#len + n <= this.#buf.length) return;
    let size = this.#buf.length * 2;
    while (size < this.#len + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.#buf.subarray(0, this.#len));
    this.#buf = next;
  }

  /** Writes one byte. */
  u8(byte: number): this {
    this.#reserve(1);
    this.#buf[this.#len++] = byte;
    return this;
  }

  /** Writes raw bytes. */
  bytes(data: Uint8Array): this {
    this.#reserve(data.length);
    this.#buf.set(data, this.#len);
    this.#len += data.length;
    return this;
  }

  /** Writes an unsigned LEB128 (safe for values up to 2^53). */
  u32(value: number): this {
    let v = value;
    do {
      let byte = v % 128;
      v = Math.floor(v / 128);
      if (v > 0) byte |= 0x80;
      this.u8(byte);
    } while (v > 0);
    return this;
  }

  /** Writes a signed LEB128 (safe for values within ±2^53). */
  signed(value: number): this {
    let v = value;
    for (;;) {
      const byte = ((v % 128) + 128) % 128;
      v = Math.floor(v / 128);
      const signBit = (byte & 0x40) !== 0;
      if ((v === 0 && !signBit) || (v === -1 && signBit)) return this.u8(byte);
      this.u8(byte | 0x80);
    }
  }

  /** Writes a signed LEB128 padded to exactly 5 bytes; returns its offset for {@linkcode patchSigned5}. */
  signed5(value: number): number {
    const at = this.#len;
    this.#reserve(5);
    this.#len += 5;
    this.patchSigned5(at, value);
    return at;
  }

  /** Overwrites a 5-byte padded signed LEB128 at `at` (value must be in ±2^34). */
  patchSigned5(at: number, value: number): void {
    let v = value;
    for (let i = 0; i < 5; i++) {
      const byte = ((v % 128) + 128) % 128;
      v = Math.floor(v / 128);
      this.#buf[at + i] = i < 4 ? byte | 0x80 : byte;
    }
  }

  /** Writes a length-prefixed UTF-8 name. */
  name(text: string): this {
    const raw = new TextEncoder().encode(text);
    return this.u32(raw.length).bytes(raw);
  }

  /** Writes `data` prefixed by its length as a LEB128. */
  sized(data: Uint8Array): this {
    return this.u32(data.length).bytes(data);
  }

  /** A copy of the bytes written so far. */
  finish(): Uint8Array<ArrayBuffer> {
    return this.#buf.slice(0, this.#len);
  }
}
