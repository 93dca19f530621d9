/**
 * Warm isolation: a copy of an instance's linear memory and exported mutable
 * globals taken right after instantiation, written back before every call.
 * Memory grown since is zero-filled (wasm memory cannot shrink).
 *
 * @module
 */

/** Globals the host manages itself and never restores. */
const HOST_GLOBALS = new Set(["__hookbox_fuel"]);

/** Pristine state of one instance. */
export class Snapshot {
  readonly #memory: WebAssembly.Memory | null;
  readonly #bytes: Uint8Array;
  readonly #globals: [WebAssembly.Global, unknown][];

  private constructor(
    memory: WebAssembly.Memory | null,
    bytes: Uint8Array,
    globals: [WebAssembly.Global, unknown][],
  ) {
    this.#memory = memory;
    this.#bytes = bytes;
    this.#globals = globals;
  }

  /** Captures memory and every exported mutable global of `instance`. */
  static take(instance: WebAssembly.Instance): Snapshot {
    const exports = instance.exports;
    const memory = exports.memory instanceof WebAssembly.Memory ? exports.memory : null;
    const bytes = memory === null ? new Uint8Array(0) : new Uint8Array(memory.buffer).slice();
    const globals: [WebAssembly.Global, unknown][] = [];
    for (const [name, value] of Object.entries(exports)) {
      if (value instanceof WebAssembly.Global && !HOST_GLOBALS.has(name) && isMutable(value)) {
        globals.push([value, value.value]);
      }
    }
    return new Snapshot(memory, bytes, globals);
  }

  /** Writes the captured state back. */
  restore(): void {
    if (this.#memory !== null) {
      const live = new Uint8Array(this.#memory.buffer);
      live.set(this.#bytes);
      if (live.length > this.#bytes.length) live.fill(0, this.#bytes.length);
    }
    for (const [global, value] of this.#globals) global.value = value;
  }
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
