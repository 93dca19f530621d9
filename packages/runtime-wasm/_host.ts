/**
 * The mutable state every host import of one plugin instance works on: the
 * current call's input, output sinks, budget and deadline, and the guest's
 * memory. One `GuestHost` per instance, reset per call, so the warm path
 * allocates almost nothing.
 *
 * @module
 */
import { FUEL_PER_BYTE, FuelMeter, HOST_CALL_FUEL } from "./_fuel.ts";
import { type Halt, HALTS } from "./instance/_halt.ts";
import { OutputSink } from "./_output.ts";
import { markWritten } from "./instance/_snapshot.ts";

/** What one call needs from the request, already converted to bytes and numbers. */
export interface CallSetup {
  input: Uint8Array;
  /** `KEY=VALUE` strings the guest may see through `environ_get`. */
  env: readonly string[];
  fuel: number;
  outputBytes: number;
  /** What the host may keep for the guest in this call (blocks, variables, bodies), bytes. */
  hostBytes: number;
  /** `performance.now()` value after which the call times out. */
  deadline: number;
  signal: AbortSignal | undefined;
}

const encoder = new TextEncoder();
// Empty and never written: shared by every new instance.
const NO_BYTES = new Uint8Array(0);
const NO_VIEW = new DataView(NO_BYTES.buffer);

/** Told once per call that runs longer than `afterMs` (see {@linkcode watchLongCalls}). */
export interface LongCallWatch {
  afterMs: number;
  onLong(): void;
}

let longCalls: LongCallWatch | null = null;

/**
 * Has `watch.onLong` called once for every call on this thread that runs
 * longer than `watch.afterMs` — noticed where the host reads the clock while
 * the guest runs (each fuel slice, each JS interrupt poll), so within about
 * a slice of it; null stops watching. A plugin worker lowers its thread's
 * priority then (`_worker_entry.ts`).
 */
export function watchLongCalls(watch: LongCallWatch | null): void {
  longCalls = watch;
}

/** Per-instance host state shared by the WASI shim, the Extism kernel overrides and `hookbox.*`. */
export class GuestHost {
  readonly stdout: OutputSink = new OutputSink();
  readonly stderr: OutputSink = new OutputSink();
  readonly meter: FuelMeter = new FuelMeter();
  /** Extism `var_*` values; cleared per call so nothing survives a call. */
  readonly vars: Map<string, Uint8Array> = new Map();
  input: Uint8Array = NO_BYTES;
  inputView: DataView = NO_VIEW;
  inputPos = 0;
  #env: readonly string[] = [];
  #envBytes: Uint8Array[] | null = null;
  deadline = Infinity;
  signal: AbortSignal | undefined = undefined;
  /** Why the current call stopped early, if it did. */
  halted: Halt | null = null;
  /** A `memory.grow` failed during this call (`hookbox.grow_failed`). */
  growFailed = false;
  /** Bytes the host keeps for the guest in this call (Extism blocks, variables, HTTP bodies). */
  hostBytes = 0;
  /** Extism blocks this call allocated (capped by `MAX_BLOCKS`). */
  blocks = 0;
  /** Cap on {@linkcode hostBytes}. */
  hostBudget = Infinity;
  memory: WebAssembly.Memory | null = null;
  /** The instance's block map when its writes are tracked (see `_snapshot.ts`). */
  blockMap: Uint8Array | null = null;
  /** Host calls in this call so far: the clock is read on every eighth. */
  #hostCalls = 0;
  #view: DataView | null = null;
  #u8: Uint8Array | null = null;
  readonly #trap: () => never;

  #startedAt = 0;
  #long = false;

  constructor(trap: () => never) {
    this.#trap = trap;
  }

  /** The call's environment as `NAME=value\0` entries, encoded on first use (most calls never ask). */
  get env(): Uint8Array[] {
    return this.#envBytes ??= this.#env.map((entry) => encoder.encode(`${entry}\0`));
  }

  /** Resets per-call state. */
  begin(setup: CallSetup): void {
    this.input = setup.input;
    this.inputPos = 0;
    this.#env = setup.env;
    this.#envBytes = null;
    this.#hostCalls = 0;
    this.deadline = setup.deadline;
    this.signal = setup.signal;
    this.halted = null;
    this.growFailed = false;
    this.hostBytes = 0;
    this.blocks = 0;
    this.hostBudget = setup.hostBytes;
    this.vars.clear();
    this.stdout.reset(setup.outputBytes);
    this.stderr.reset(setup.outputBytes);
    this.meter.start(setup.fuel);
    this.#startedAt = performance.now();
    this.#long = false;
  }

  /** Replaces the input with `input` (a private copy), with a DataView for `input_load_*`. */
  setInput(input: Uint8Array): void {
    this.input = input;
    this.inputView = new DataView(input.buffer, input.byteOffset, input.byteLength);
  }

  /**
   * Counts `bytes` more that the host keeps for the guest; halts with
   * `limit`/`memory` past the budget. `bytes` must be a validated count.
   */
  keep(bytes: number): void {
    this.hostBytes += bytes;
    if (this.hostBytes > this.hostBudget) this.halt(HALTS.memory);
  }

  /**
   * Charges the fuel of `bytes` the host copies for the guest within a host
   * call (Extism blocks read or stored), and stops the guest if it is spent.
   */
  copied(bytes: number): void {
    this.meter.charge(bytes * FUEL_PER_BYTE);
    if (this.meter.spent()) this.halt(HALTS.fuel);
  }

  /**
   * Charges one host call's fuel (bytes it copies: {@linkcode copied}), then
   * stops the guest if its fuel is spent, the deadline passed or the executor
   * is closing. The clock is read on every eighth host call of a call: host
   * calls are bounded by fuel, so eight cannot overrun the deadline by more
   * than eight host calls' work, and the meter's own checks (every fuel
   * slice: {@linkcode checkAll}; every JS interrupt; the end of the call)
   * read it every time.
   */
  check(price: number = HOST_CALL_FUEL): void {
    this.meter.charge(price);
    if (this.meter.spent()) this.halt(HALTS.fuel);
    if ((++this.#hostCalls & 7) === 0 && performance.now() > this.deadline) this.halt(HALTS.time);
    if (this.signal?.aborted) this.halt(HALTS.aborted);
  }

  /** {@linkcode check}, always reading the clock (a fuel slice ran out). */
  checkAll(): void {
    this.check();
    const now = performance.now();
    if (now > this.deadline) this.halt(HALTS.time);
    this.#watch(now);
  }

  /** The limit that should stop the guest now (deadline, fuel, abort), if any. */
  pending(): Halt | null {
    const now = performance.now();
    this.#watch(now);
    if (now > this.deadline) return HALTS.time;
    if (this.meter.spent()) return HALTS.fuel;
    if (this.signal?.aborted) return HALTS.aborted;
    return null;
  }

  #watch(now: number): void {
    if (longCalls !== null && !this.#long && now - this.#startedAt > longCalls.afterMs) {
      this.#long = true;
      longCalls.onLong();
    }
  }

  /** Records why the call stops, then traps through every guest frame. */
  halt(halt: Halt): never {
    this.halted ??= halt;
    return this.#trap();
  }

  /**
   * Records that the host wrote `[ptr, ptr + length)` of guest memory, so a
   * warm instance restores those pages. Every host write must be recorded.
   */
  wrote(ptr: number, length: number): void {
    if (this.blockMap !== null) markWritten(this.blockMap, ptr, length);
  }

  /** A DataView of guest memory, refreshed after `memory.grow`. */
  view(): DataView {
    const buffer = this.#buffer();
    if (this.#view === null || this.#view.buffer !== buffer) this.#view = new DataView(buffer);
    return this.#view;
  }

  /** A byte view of guest memory, refreshed after `memory.grow`. */
  bytes(): Uint8Array {
    const buffer = this.#buffer();
    if (this.#u8 === null || this.#u8.buffer !== buffer) this.#u8 = new Uint8Array(buffer);
    return this.#u8;
  }

  #buffer(): ArrayBufferLike {
    if (this.memory === null) throw new RangeError("the plugin exports no memory");
    return this.memory.buffer;
  }
}
