/**
 * Fuel-metering overhead: runs CPU-heavy kernels unmetered and metered
 * (refuelled in large slices) and prints the time ratio.
 *
 *   deno run -A scripts/bench_fuel.ts
 */
import wabtInit from "wabt";
import { instrument } from "../packages/rewriter/mod.ts";

const wabt = await wabtInit();
const fixtures = new URL("../tests/rewriter/fixtures/", import.meta.url);

async function compile(name: string): Promise<Uint8Array<ArrayBuffer>> {
  const text = await Deno.readTextFile(new URL(name, fixtures));
  return new Uint8Array(wabt.parseWat(name, text).toBinary({}).buffer);
}

async function load(bytes: Uint8Array<ArrayBuffer>): Promise<WebAssembly.Exports> {
  let exports: WebAssembly.Exports = {};
  const out_of_fuel = () => {
    (exports.__hookbox_fuel as WebAssembly.Global).value = 1_000_000_000n;
  };
  const { instance } = await WebAssembly.instantiate(bytes, { hookbox: { out_of_fuel } });
  exports = instance.exports;
  return exports;
}

/** Best-of-`rounds` milliseconds for `a` and `b`, alternating to share machine noise. */
function timePair(a: () => unknown, b: () => unknown, rounds = 15): [number, number] {
  const best = [Infinity, Infinity];
  for (let i = 0; i < rounds; i++) {
    [a, b].forEach((fn, k) => {
      const t0 = performance.now();
      fn();
      best[k] = Math.min(best[k]!, performance.now() - t0);
    });
  }
  return [best[0]!, best[1]!];
}

const kernels: [string, string, number][] = [
  ["heavy_loop.wat", "run", 20_000_000], // tight loop with a branch per iteration
  ["recursion.wat", "fib", 31], // call-heavy recursion
];

for (const [file, fn, arg] of kernels) {
  const plain = await compile(file);
  const base = await load(plain);
  const metered = await load(instrument(plain, { memoryPages: 1 }));
  const run = (e: WebAssembly.Exports) => (e[fn] as (n: number) => number)(arg);
  if (run(base) !== run(metered)) throw new Error(`${file}: metered result differs`);
  const [a, b] = timePair(() => run(base), () => run(metered));
  console.log(
    `${file} ${fn}(${arg}): unmetered ${a.toFixed(1)} ms, metered ${b.toFixed(1)} ms, ` +
      `ratio ${(b / a).toFixed(3)} (overhead ${((b / a - 1) * 100).toFixed(1)} %)`,
  );
}
