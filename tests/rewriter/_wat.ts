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
 * A valid module at one of the engine's limits that metering's additions
 * take it past, built from bytes: one function with 50,000 i32 locals, or
 * one function of 1.3 million empty loops (3.9 MB of body; metered, past the
 * engine's 7.6 MB for a function).
 */
export function atEngineLimit(what: "locals" | "body"): Uint8Array {
  const section = (id: number, body: number[]) => [id, ...leb(body.length), ...body];
  const body = what === "locals" ? [1, ...leb(50_000), 0x7f, 0x0b] : [0];
  if (what === "body") {
    for (let i = 0; i < 1_300_000; i++) body.push(0x03, 0x40, 0x0b);
    body.push(0x0b);
  }
  return new Uint8Array([
    ...[0, 0x61, 0x73, 0x6d, 1, 0, 0, 0],
    ...section(1, [1, 0x60, 0, 0]),
    ...section(3, [1, 0]),
    ...section(5, [1, 0, 1]),
    ...section(7, [1, 6, ...new TextEncoder().encode("_start"), 0, 0]),
    ...section(10, [1, ...leb(body.length), ...body]),
  ]);
}

/**
 * A valid module with `n` of one thing beside one exported `_start`: `n`
 * defined functions, `n` i32 globals, `n` exports (of `_start` under other
 * names) or `n` imports (of WASI's `sched_yield`, a name plugins may import).
 */
export function manyOf(
  what: "functions" | "globals" | "exports" | "imports",
  n: number,
): Uint8Array {
  const section = (id: number, body: number[]) => [id, ...leb(body.length), ...body];
  const text = (s: string) => {
    const bytes = [...new TextEncoder().encode(s)];
    return [...leb(bytes.length), ...bytes];
  };
  const imports: number[] = [];
  if (what === "imports") {
    imports.push(...leb(n));
    for (let i = 0; i < n; i++) {
      imports.push(...text("wasi_snapshot_preview1"), ...text("sched_yield"), 0, 1);
    }
  }
  const start = what === "imports" ? n : 0; // the index of the defined `_start`
  const defined = what === "functions" ? n : 1;
  const globals: number[] = [];
  if (what === "globals") {
    globals.push(...leb(n));
    for (let i = 0; i < n; i++) globals.push(0x7f, 0, 0x41, 0, 0x0b);
  }
  const exportCount = what === "exports" ? n : 1;
  const exports: number[] = [...leb(exportCount), ...text("_start"), 0, ...leb(start)];
  for (let i = 1; i < exportCount; i++) exports.push(...text(`e${i}`), 0, ...leb(start));
  const code: number[] = [...leb(defined)];
  for (let i = 0; i < defined; i++) code.push(2, 0, 0x0b);
  return new Uint8Array([
    ...[0, 0x61, 0x73, 0x6d, 1, 0, 0, 0],
    ...section(1, [2, 0x60, 0, 0, 0x60, 0, 1, 0x7f]),
    ...(imports.length > 0 ? section(2, imports) : []),
    ...section(3, [...leb(defined), ...new Array(defined).fill(0)]),
    ...section(5, [1, 0, 1]),
    ...(globals.length > 0 ? section(6, globals) : []),
    ...section(7, exports),
    ...section(10, code),
  ]);
}
