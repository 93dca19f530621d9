/**
 * Host side of the fuel protocol. The instrumented module keeps a mutable
 * i64 global `__hookbox_fuel` that it charges at function entries and loop
 * headers, and calls `hookbox.out_of_fuel` when the global goes negative.
 * The host hands out fuel in slices so that it regains control regularly —
 * to enforce both the fuel budget and the wall-clock deadline without threads
 * or timers.
 *
 * @module
 */

/** Fuel handed to the guest per slice: bounds how long the guest runs between checks. */
export const FUEL_SLICE = 1_000_000;

/**
 * Fuel every host call costs, so fuel alone bounds a guest's CPU even where
 * the clock stands still during CPU work (deployed edge Workers): a loop of
 * host calls spends far more host CPU per guest instruction than a plain loop.
 * Set from measurement (`deno run -A scripts/bench_host_fuel.ts`): a host call
 * costs the host about 0.35 µs, and the edge rate is one unit per ns
 * (EDGE_FUEL_PER_MS), so a host-call loop stays within its budget with room
 * for a slower machine.
 */
export const HOST_CALL_FUEL = 600;

/**
 * Fuel of a call to one of the Extism kernel's cheap functions (`load_u8`,
 * `store_u64`, `length`, `input_load_u8`, …) and of `hookbox.should_interrupt`:
 * a loop of them, free before, ran 21× the CPU its fuel allowed at the edge
 * rate (one unit per ns); at this price it runs 0.76× (`deno run -A
 * scripts/bench_host_fuel.ts`, `kernel_call_burst_extism`; 64 left it at 2.4×).
 */
export const KERNEL_CALL_FUEL = 192;

/** Kernel functions that only touch a block or the input: {@linkcode KERNEL_CALL_FUEL} each. */
const CHEAP_KERNEL: ReadonlySet<string> = new Set([
  "free",
  "load_u8",
  "load_u64",
  "store_u8",
  "store_u64",
  "input_offset",
  "input_length",
  "input_load_u8",
  "input_load_u64",
  "length",
  "length_unsafe",
  "get_log_level",
]);

/**
 * What one call of Extism kernel function `name` costs: the cheap memory
 * functions {@linkcode KERNEL_CALL_FUEL}, every other one (they allocate,
 * copy, keep or leave the sandbox) {@linkcode HOST_CALL_FUEL}, plus the bytes
 * they copy (charged where they copy them).
 */
export function kernelCallFuel(name: string): number {
  return CHEAP_KERNEL.has(name) ? KERNEL_CALL_FUEL : HOST_CALL_FUEL;
}

/**
 * Fuel per byte the host copies for the guest (WASI reads and writes): the
 * measured cost of taking a write into the output is about 2 ns per byte.
 */
export const FUEL_PER_BYTE = 3;

/**
 * Host charges are gathered and taken from the guest's counter once they
 * reach this many units (reading and writing the i64 global costs the host
 * more than most host calls): a guest sees them at most this late, far less
 * than a slice.
 */
export const CHARGE_BATCH = 4096;

/** Counts the fuel one call consumes against its budget. */
export class FuelMeter {
  #global: WebAssembly.Global | null = null;
  #budget = 0;
  #consumed = 0;
  #issued = 0;
  /** Host charges not yet taken from the global. */
  #pending = 0;

  /** Binds the meter to an instance's fuel global (null: module not metered). */
  attach(global: WebAssembly.Global | null): void {
    this.#global = global;
  }

  /** True when the instance is metered. */
  get metered(): boolean {
    return this.#global !== null;
  }

  /** Starts a call with a fresh budget and hands out the first slice. */
  start(budget: number): void {
    this.#budget = budget;
    this.#consumed = 0;
    this.#pending = 0;
    this.#issue();
  }

  /** Fuel used so far in this call (the overshoot of the last block included). */
  used(): number {
    const global = this.#global;
    if (global === null) return 0;
    return this.#consumed + this.#issued - Number(global.value as bigint) + this.#pending;
  }

  /**
   * Charges host work to the current slice; the guest sees it at its next
   * check once {@linkcode CHARGE_BATCH} units have gathered.
   */
  charge(units: number): void {
    if (this.#global === null || units <= 0) return;
    this.#pending += Math.ceil(units);
    if (this.#pending >= CHARGE_BATCH) this.#flush();
  }

  #flush(): void {
    const global = this.#global!;
    global.value = (global.value as bigint) - BigInt(this.#pending);
    this.#pending = 0;
  }

  /**
   * True when the budget is spent. Before the last slice the guest cannot
   * have spent it (it is stopped at its next check past the slice), so the
   * global is only read then.
   */
  spent(): boolean {
    if (this.#global === null) return false;
    if (this.#consumed + this.#issued + this.#pending < this.#budget) return false;
    return this.used() >= this.#budget;
  }

  /**
   * Settles the exhausted slice. Returns false when the budget is spent;
   * otherwise hands out the next slice and returns true.
   */
  refill(): boolean {
    this.#consumed = this.used();
    this.#issued = 0;
    this.#pending = 0;
    if (this.#consumed >= this.#budget) return false;
    this.#issue();
    return true;
  }

  #issue(): void {
    const global = this.#global;
    if (global === null) return;
    this.#issued = Math.max(0, Math.min(FUEL_SLICE, this.#budget - this.#consumed));
    global.value = BigInt(this.#issued);
  }
}
