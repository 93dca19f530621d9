/**
 * Differential check of the rewriter on one module: the original and the
 * rewritten module run the same calls side by side.
 *
 * (a) the rewritten module validates;
 * (b) with enough fuel it behaves exactly like the original: the same results,
 *     traps and uncaught exceptions, the same memory, memory size and
 *     globals, and every 4 KiB page whose bytes changed is marked in
 *     `__hookbox_dirty`; with exactly the fuel it used, a call that returned
 *     returns the same again;
 * (c) with one unit less, a call that returned stops for fuel: the host's
 *     `out_of_fuel` refuses, or the counter is negative when the call returns
 *     (which the runtime reports as `limit`/`fuel`).
 *
 * @module
 */
import { TRAP_MODULE_BYTES, trapFunction } from "../../packages/runtime-wasm/instance/_halt.ts";
import { instrument, WRITE_BLOCK_SHIFT, WRITE_STRADDLE } from "../../packages/rewriter/mod.ts";

type Run = (a: number, b: number) => number;

/** The exception-handling part of the JS API, which Deno's types leave out. */
type Tag = object;
interface WasmException {
  is(tag: Tag): boolean;
  getArg(tag: Tag, index: number): unknown;
}
const WasmException = (WebAssembly as unknown as {
  Exception: abstract new (...args: never[]) => WasmException;
}).Exception;

/** How one call ended. */
type Ending =
  | { kind: "return"; value: number }
  | { kind: "trap"; message: string }
  | { kind: "exception"; payload: number }
  | { kind: "fuel" };

/** What a module looks like after a call. */
interface State {
  ending: Ending;
  globals: [number, number];
  pages: number;
  memory: Uint8Array;
}

const PAGE = 65_536;
/** Fuel for one call; a module that needs more is skipped (it is rare). */
const BUDGET = 50_000_000n;
const LOTS = 1n << 40n;

/** The calls every module gets, in order, on one instance. */
export const CALLS: ReadonlyArray<[number, number]> = [[0, 0], [1, 7], [-1, 65_535], [3, 2]];

interface Side {
  /** Set by the rewritten side's `out_of_fuel`, which then traps. */
  outOfFuel?: boolean;
  run: Run;
  tag: Tag;
  exports: WebAssembly.Exports;
}

function instantiateOriginal(bytes: Uint8Array<ArrayBuffer>): Side {
  const module = new WebAssembly.Module(bytes);
  const { exports } = new WebAssembly.Instance(module, {});
  return { run: exports.run as Run, tag: exports.e as Tag, exports };
}

/**
 * Stops a guest the way the runtime does: a JS exception could be caught by
 * the guest's `catch_all`, a trap cannot. The flag says why it trapped.
 */
const trap = trapFunction(new WebAssembly.Module(TRAP_MODULE_BYTES as Uint8Array<ArrayBuffer>));

function instantiateRewritten(bytes: Uint8Array<ArrayBuffer>): Side {
  const module = new WebAssembly.Module(bytes);
  const side = {} as Side;
  const hookbox = {
    out_of_fuel() {
      side.outOfFuel = true;
      trap();
    },
    stack_exhausted() {
      throw new RangeError("stack exhausted");
    },
    grow_failed() {},
  };
  const { exports } = new WebAssembly.Instance(module, { hookbox });
  return Object.assign(side, {
    run: exports.run as Run,
    tag: exports.e as Tag,
    exports,
    outOfFuel: false,
  });
}

function call(side: Side, a: number, b: number): Ending {
  side.outOfFuel = false;
  try {
    return { kind: "return", value: side.run(a, b) };
  } catch (err) {
    if (side.outOfFuel) return { kind: "fuel" };
    if (err instanceof WasmException && err.is(side.tag)) {
      return { kind: "exception", payload: err.getArg(side.tag, 0) as number };
    }
    if (err instanceof WebAssembly.RuntimeError) return { kind: "trap", message: err.message };
    throw err;
  }
}

function state(side: Side, ending: Ending): State {
  const memory = side.exports.memory as WebAssembly.Memory;
  return {
    ending,
    globals: [
      (side.exports.g0 as WebAssembly.Global).value,
      (side.exports.g1 as WebAssembly.Global).value,
    ],
    pages: memory.buffer.byteLength / PAGE,
    memory: new Uint8Array(memory.buffer).slice(),
  };
}

function fuelOf(side: Side): WebAssembly.Global {
  return side.exports.__hookbox_fuel as WebAssembly.Global;
}

/** A failed property, with what was expected and what happened. */
export class Divergence extends Error {}

function same(what: string, expected: unknown, actual: unknown): void {
  const a = JSON.stringify(expected);
  const b = JSON.stringify(actual);
  if (a !== b) throw new Divergence(`${what}: expected ${a}, got ${b}`);
}

function sameMemory(what: string, expected: Uint8Array, actual: Uint8Array): void {
  same(`${what} memory length`, expected.length, actual.length);
  for (let i = 0; i < expected.length; i++) {
    if (expected[i] !== actual[i]) {
      throw new Divergence(`${what}: memory differs at ${i}: ${expected[i]} vs ${actual[i]}`);
    }
  }
}

/**
 * Every byte that differs between `before` and `after` is covered by a mark in
 * `dirty`: its own page's, or the previous page's when it lies in the first
 * {@linkcode WRITE_STRADDLE} bytes (a store that straddles two pages).
 */
function marked(what: string, before: Uint8Array, after: Uint8Array, dirty: Uint8Array): void {
  const page = 1 << WRITE_BLOCK_SHIFT;
  for (let i = 0; i < after.length; i++) {
    if ((before[i] ?? 0) === after[i]) continue;
    const p = Math.floor(i / page);
    const covered = dirty[p] === 1 || (i % page < WRITE_STRADDLE && p > 0 && dirty[p - 1] === 1);
    if (!covered) {
      throw new Divergence(`${what}: byte ${i} changed but its page is not marked dirty`);
    }
  }
}

/** Figures from one module's check. */
export interface CheckFigures {
  calls: number;
  returned: number;
  trapped: number;
  thrown: number;
  fuelStops: number;
  /** 1 when the module needed more than the budget and was not compared. */
  skipped: number;
}

/** Figures of no module, to add up into. */
export function noFigures(): CheckFigures {
  return { calls: 0, returned: 0, trapped: 0, thrown: 0, fuelStops: 0, skipped: 0 };
}

/** Adds `more` into `total`. */
export function addFigures(total: CheckFigures, more: CheckFigures): void {
  for (const key of Object.keys(total) as (keyof CheckFigures)[]) total[key] += more[key];
}

/**
 * Runs properties (a)–(c) on `bytes`; throws {@linkcode Divergence} when one
 * fails. `rewriteFrom` (the harness's own test) rewrites other bytes instead.
 */
export function checkRewrite(
  bytes: Uint8Array<ArrayBuffer>,
  rewriteFrom: Uint8Array<ArrayBuffer> = bytes,
): CheckFigures {
  const rewritten = instrument(rewriteFrom, {
    memoryPages: 4,
    maxCallDepth: 64,
    signalGrowFailure: true,
    trackWrites: true,
    exportGlobals: true,
    validate: false,
  });
  if (!WebAssembly.validate(rewritten)) throw new Divergence("(a) the rewritten module is invalid");
  const figures = noFigures();
  const original = instantiateOriginal(bytes);
  const metered = instantiateRewritten(rewritten);
  const dirty = new Uint8Array((metered.exports.__hookbox_dirty as WebAssembly.Memory).buffer);
  const spent: bigint[] = [];
  const endings: Ending[] = [];
  for (const [i, [a, b]] of CALLS.entries()) {
    const what = `call ${i} run(${a}, ${b})`;
    const before = state(metered, { kind: "return", value: 0 }).memory;
    dirty.fill(0);
    // The metered side runs first, on a budget, so the original only runs
    // programs known to finish soon; a costlier module is skipped.
    fuelOf(metered).value = BUDGET;
    const actual = state(metered, call(metered, a, b));
    if (actual.ending.kind === "fuel") {
      figures.skipped = 1;
      return figures;
    }
    const expected = state(original, call(original, a, b));
    spent.push(BUDGET - (fuelOf(metered).value as bigint));
    endings.push(expected.ending);
    same(`(b) ${what} ending`, expected.ending, actual.ending);
    same(`(b) ${what} globals`, expected.globals, actual.globals);
    same(`(b) ${what} pages`, expected.pages, actual.pages);
    sameMemory(`(b) ${what}`, expected.memory, actual.memory);
    marked(`(b) ${what}`, before, actual.memory, dirty);
    figures.calls++;
    if (expected.ending.kind === "return") figures.returned++;
    if (expected.ending.kind === "trap") figures.trapped++;
    if (expected.ending.kind === "exception") figures.thrown++;
  }
  // Replays the calls on fresh instances with exactly the fuel each used,
  // then with one unit less for the last call that returned.
  const last = endings.findLastIndex((e) => e.kind === "return");
  const exact = instantiateRewritten(rewritten);
  const short = instantiateRewritten(rewritten);
  for (const [i, [a, b]] of CALLS.entries()) {
    // The counter is exact only when control returns to the host normally:
    // a trap or an exception leaves the charge of the unwound frames unsaved.
    const returned = endings[i]!.kind === "return";
    fuelOf(exact).value = returned ? spent[i]! : LOTS;
    const ending = call(exact, a, b);
    same(`(b) call ${i} replayed`, endings[i], ending);
    if (returned && (fuelOf(exact).value as bigint) < 0n) {
      throw new Divergence(`(b) call ${i} ran out with exactly the ${spent[i]} units it used`);
    }
    fuelOf(short).value = i === last ? spent[i]! - 1n : LOTS;
    const shortEnding = call(short, a, b);
    if (i !== last) continue;
    const stopped = shortEnding.kind === "fuel" || (fuelOf(short).value as bigint) < 0n;
    if (!stopped) {
      throw new Divergence(
        `(c) call ${i} returned with one unit less than the ${spent[i]} it used`,
      );
    }
    figures.fuelStops++;
  }
  return figures;
}
