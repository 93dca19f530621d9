/**
 * Bounds-checked reader over WebAssembly bytes. Every read that would run past
 * the end, or a LEB128 that is too long, throws `PLUGIN_INVALID` naming the
 * offset, so garbage input can never be half-decoded.
 *
 * @module
 */

import { HookboxError } from "../../core/errors.ts";

/** Throws `PLUGIN_INVALID` with the offset where decoding failed. */
export function invalid(message: string, offset: number): never {
  throw new HookboxError("PLUGIN_INVALID", `invalid wasm: ${message} at offset ${offset}`, {
    offset,
  });
}

/** A cursor over a byte range `[pos, end)` of `bytes`. */
export class Reader {
  readonly bytes: Uint8Array;
  pos: number;
  end: number;

  constructor(bytes: Uint8Array, pos = 0, end = bytes.length) {
    this.bytes = bytes;
    this.pos = pos;
    this.end = end;
  }

  /** True when every byte of the range has been consumed. */
  get done(): boolean {
    return this.pos >= this.end;
  }

  /** Reads one byte. */
  u8(): number {
    if (this.pos >= this.end) invalid("unexpected end of bytes", this.pos);
    return this.bytes[this.pos++]!;
  }

  /** Reads `n` raw bytes (a view, not a copy). */
  take(n: number): Uint8Array {
    if (n < 0 || this.pos + n > this.end) {
      invalid(`need ${n} bytes, ${this.end - this.pos} left`, this.pos);
    }
    const out = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  /** Reads an unsigned LEB128 of at most `bits` bits (32 by default) as a number. */
  u32(bits = 32): number {
    const start = this.pos;
    const maxBytes = Math.ceil(bits / 7);
    let result = 0;
    let scale = 1;
    for (let i = 0; i < maxBytes; i++) {
      const byte = this.u8();
      result += (byte & 0x7f) * scale;
      scale *= 128;
      if ((byte & 0x80) === 0) {
        if (result > 2 ** bits - 1 && bits <= 32) invalid("LEB128 out of range", start);
        return result;
      }
    }
    return invalid(`LEB128 longer than ${maxBytes} bytes`, start);
  }

  /** Reads an unsigned 64-bit LEB128; values above 2^53 lose precision. */
  u64(): number {
    return this.u32(64);
  }

  /** Reads a signed LEB128 of at most `bits` bits; returns the value as a number. */
  signed(bits: number): number {
    const start = this.pos;
    const maxBytes = Math.ceil(bits / 7);
    let result = 0;
    let scale = 1;
    for (let i = 0; i < maxBytes; i++) {
      const byte = this.u8();
      result += (byte & 0x7f) * scale;
      scale *= 128;
      if ((byte & 0x80) === 0) return (byte & 0x40) ? result - scale : result;
    }
    return invalid(`signed LEB128 longer than ${maxBytes} bytes`, start);
  }

  /** Skips a signed LEB128 of at most `bits` bits without building its value. */
  skipSigned(bits: number): void {
    const start = this.pos;
    const maxBytes = Math.ceil(bits / 7);
    for (let i = 0; i < maxBytes; i++) {
      if ((this.u8() & 0x80) === 0) return;
    }
    invalid(`signed LEB128 longer than ${maxBytes} bytes`, start);
  }

  /** Reads a length-prefixed UTF-8 name. */
  name(): string {
    const start = this.pos;
    const raw = this.take(this.u32());
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(raw);
    } catch {
      return invalid("name is not valid UTF-8", start);
    }
  }

  /** A reader over the next `n` bytes; this reader skips past them. */
  sub(n: number): Reader {
    const start = this.pos;
    this.take(n);
    return new Reader(this.bytes, start, start + n);
  }
}
