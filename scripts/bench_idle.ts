/**
 * How much slower the same work runs after the machine has idled: a fixed
 * piece of CPU work (a pass over 8 MiB and 200,000 square roots) timed back
 * to back, then after sleeps of 50 ms, 500 ms and 1 s, in one process. An
 * agent calls its hooks with gaps like these, so a daemon's work for a call
 * meets cold caches and a virtual CPU that has been idle
 * (docs/BENCHMARKS.md, "One-shot CLI as an agent's hook command").
 *
 *   deno run scripts/bench_idle.ts [--rounds 10]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { median } from "./_stats.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { rounds: { type: "string", default: "10" } },
});
const ROUNDS = Number(values.rounds);
const memory = new Uint8Array(8 << 20);

/** The fixed work; its result is returned so that it is not optimised away. */
function work(): number {
  let sum = 0;
  for (let i = 0; i < memory.length; i += 64) sum += ++memory[i]!;
  for (let k = 0; k < 200_000; k++) sum += Math.sqrt(k);
  return sum;
}

let sink = 0;
for (let i = 0; i < 50; i++) sink += work();
const rows: [number, number][] = [];
for (const gap of [0, 50, 500, 1000]) {
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    if (gap > 0) await new Promise((resolve) => setTimeout(resolve, gap));
    const t0 = performance.now();
    sink += work();
    times.push(performance.now() - t0);
  }
  rows.push([gap, median(times)]);
}
const base = rows[0]![1];
console.log(
  `the same work after an idle gap, medians of ${ROUNDS} (checksum ${Math.round(sink) % 7}):`,
);
for (const [gap, ms] of rows) {
  console.log(
    `  gap ${String(gap).padStart(4)} ms: ${ms.toFixed(2)} ms  ${(ms / base).toFixed(2)}×`,
  );
}
