/**
 * A capped byte sink for a guest's stdout or stderr. The buffer is reused
 * across calls of a warm instance, so a steady-state call allocates nothing
 * here.
 *
 * @module
 */

const decoder = new TextDecoder();

/** Collects bytes up to a cap; reports when a write crosses it. */
export class OutputSink {
  #buffer = new Uint8Array(256);
  #length = 0;
  #cap = 0;

  /** Empties the sink and sets its cap in bytes. */
  reset(cap: number): void {
    this.#length = 0;
    this.#cap = cap;
  }

  /** Bytes written so far. */
  get length(): number {
    return this.#length;
  }

  /**
   * Appends `bytes`. Returns false when the cap was crossed: the sink then
   * keeps exactly `cap` bytes and the caller stops the guest.
   */
  write(bytes: Uint8Array): boolean {
    const room = this.#cap - this.#length;
    const taken = bytes.length <= room ? bytes : bytes.subarray(0, Math.max(0, room));
    this.#reserve(taken.length);
    this.#buffer.set(taken, this.#length);
    this.#length += taken.length;
    return taken.length === bytes.length;
  }

  /** Replaces the contents (Extism `output_set` / `error_set`). */
  replace(bytes: Uint8Array): boolean {
    this.#length = 0;
    return this.write(bytes);
  }

  /** The contents as UTF-8 text (invalid sequences replaced). */
  text(): string {
    return this.#length === 0 ? "" : decoder.decode(this.#buffer.subarray(0, this.#length));
  }

  #reserve(extra: number): void {
    const needed = this.#length + extra;
    if (needed <= this.#buffer.length) return;
    let size = this.#buffer.length * 2;
    while (size < needed) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.#buffer.subarray(0, this.#length));
    this.#buffer = next;
  }
}
