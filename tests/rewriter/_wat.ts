/** Test helper: compiles `.wat` fixtures with npm `wabt`. */
import wabtInit from "wabt";

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
  const { instance } = await WebAssembly.instantiate(bytes, {
    ...opts.imports,
    hookbox: { ...opts.imports?.hookbox, ...hookbox },
  });
  exports = instance.exports;
  return { exports, refuels: () => refuels, growFailures: () => growFailures };
}
