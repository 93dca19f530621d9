/**
 * How well fuel alone bounds CPU where the clock stands still during CPU work
 * (deployed edge Workers): three hostile plugins from `tests/corpus` run
 * under a fuel budget with no deadline — a plain instruction loop
 * (`loop_forever`), a loop of host calls (`host_call_burst`, 10,000 clock
 * reads) and an output flood (`output_flood`, 64 KiB writes) — interleaved
 * rounds, medians. Each line prints nanoseconds of CPU per fuel unit and the
 * ratio to the budget the edge gives a hook (EDGE_FUEL_PER_MS units per
 * millisecond of its timeout): a ratio of 1.2 means the hook ran 1.2× the CPU
 * its timeout allows.
 *
 *   deno run -A scripts/bench_host_fuel.ts [--rounds 7]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { EDGE_FUEL_PER_MS } from "../packages/edge/worker.ts";
import { corpusRuntime, request, wasmHook } from "../tests/runtime-wasm/_corpus.ts";
import { median } from "./_stats.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { rounds: { type: "string", default: "7" } },
});
const ROUNDS = Number(values.rounds);
const FUEL = 20_000_000;
/** No deadline and room for the flood: fuel is the only bound, as on a Worker. */
const LIMITS = { timeoutMs: 600_000, fuel: FUEL, outputKb: 64 * 1024 };
const CASES = [
  "loop_forever",
  "host_call_burst",
  "kernel_call_burst_extism",
  "output_flood",
] as const;

const runtime = corpusRuntime();
const perUnit: Record<string, number[]> = Object.fromEntries(CASES.map((c) => [c, []]));
for (let round = 0; round <= ROUNDS; round++) {
  for (const name of CASES) {
    const hook = wasmHook(name);
    let fuel = 0;
    const t0 = performance.now();
    for (let i = 0; i < 10; i++) {
      const result = await runtime.run(request(hook, undefined, LIMITS));
      fuel += result.fuel ?? 0;
    }
    const ms = performance.now() - t0;
    // Round 0 warms the JIT and the plugin caches.
    if (round > 0) perUnit[name]!.push(ms * 1e6 / fuel);
  }
}
await runtime.close?.();

const budgetNs = 1e6 / EDGE_FUEL_PER_MS;
console.log(
  `${ROUNDS} interleaved rounds × 10 runs, ${
    FUEL / 1e6
  } M fuel each, no deadline; edge budget ${budgetNs} ns per unit`,
);
for (const name of CASES) {
  const ns = median(perUnit[name]!);
  console.log(
    `${name.padEnd(16)} ${ns.toFixed(3)} ns per fuel unit = ${
      (ns / budgetNs).toFixed(2)
    }× its CPU budget (target ≤ 1.2×)`,
  );
}
