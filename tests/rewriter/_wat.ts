/** Test helper: compiles `.wat` fixtures with npm `wabt`. */
import wabtInit from "wabt";
import { leb } from "../integration/_plugins.ts";

const wabt = await wabtInit();
const FEATURES = {
  exceptions: true,
  simd: true,
  tail_call: true,
  multi_memory: true,
  memory64: true,
  threads: true,
} as const;

/** Compiles WAT text to a binary module. */
export function wat(text: string, name = "inline.wat"): Uint8Array<ArrayBuffer> {
  const mod = wabt.parseWat(name, text, FEATURES);
  try {
    const { buffer } = mod.toBinary({});
    return new Uint8Array(buffer);
  } finally {
    mod.destroy();
  }
}

/** Compiles `tests/rewriter/fixtures/<name>`. */
export async function fixture(name: string): Promise<Uint8Array<ArrayBuffer>> {
  const url = new URL(`./fixtures/${name}`, import.meta.url);
  return wat(await Deno.readTextFile(url), name);
}

/** Thrown by the test host's `out_of_fuel` when it refuses to refuel. */
export class OutOfFuel extends Error {}

/**
 * Instantiates `bytes` with a fuel host: `slices` refills of `slice` fuel,
 * then throws. `growFailures()` counts calls of `hookbox.grow_failed`.
 */
export async function instantiate(
  bytes: Uint8Array<ArrayBuffer>,
  opts: { slice?: number; slices?: number; imports?: WebAssembly.Imports } = {},
): Promise<{ exports: WebAssembly.Exports; refuels: () => number; growFailures: () => number }> {
  let refuels = 0;
  let growFailures = 0;
  let exports: WebAssembly.Exports = {};
  const hookbox = {
    out_of_fuel() {
      if (refuels >= (opts.slices ?? 0)) throw new OutOfFuel("out of fuel");
      refuels++;
      (exports.__hookbox_fuel as WebAssembly.Global).value = BigInt(opts.slice ?? 1000);
    },
    stack_exhausted() {
      throw new RangeError("hookbox stack exhausted");
    },
    grow_failed() {
      growFailures++;
    },
  };
  const { instance } = await WebAssembly.instantiate(bytes, { ...opts.imports, hookbox });
  exports = instance.exports;
  return { exports, refuels: () => refuels, growFailures: () => growFailures };
}

/**
 * A valid module at one of the engine's limits, built from bytes: one function
 * with 50,000 i32 locals, or a million i32 globals.
 */
export function atEngineLimit(what: "locals" | "globals"): Uint8Array {
  const section = (id: number, body: number[]) => [id, ...leb(body.length), ...body];
  const body = what === "locals" ? [1, ...leb(50_000), 0x7f, 0x0b] : [0, 0x0b];
  const globals: number[] = [];
  if (what === "globals") {
    globals.push(...leb(1_000_000));
    for (let i = 0; i < 1_000_000; i++) globals.push(0x7f, 0, 0x41, 0, 0x0b);
  }
  return new Uint8Array([
    ...[0, 0x61, 0x73, 0x6d, 1, 0, 0, 0],
    ...section(1, [1, 0x60, 0, 0]),
    ...section(3, [1, 0]),
    ...section(5, [1, 0, 1]),
    ...(what === "globals" ? section(6, globals) : []),
    ...section(7, [1, 6, ...new TextEncoder().encode("_start"), 0, 0]),
    ...section(10, [1, ...leb(body.length), ...body]),
  ]);
}
