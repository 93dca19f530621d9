/**
 * Benchmark of the AssemblyScript shell guard: compile time, plugin size and
 * warm call time through hookbox's wasm runtime (`isolation: warm`, metered,
 * as dispatched) on a ~1 KB pre-tool-call event. Run: `deno run -A scripts/bench_as.ts [calls]`.
 *
 * @module
 */

import { denoFs } from "../packages/host-deno/fs.ts";
import { compileAsHook } from "../packages/compile/as.ts";
import { loadHook } from "../packages/core/hook/discover.ts";
import { DEFAULT_POLICY, effectiveLimits } from "../packages/core/policy.ts";
import { createWasmRuntime } from "../packages/runtime-wasm/mod.ts";
import { LONG_EVENT, TYPICAL_EVENT } from "./_bench_events.ts";

const calls = Number(Deno.args[0] ?? 20_000);
const entry = new URL("../hooks/shell-guard-as/scripts/run.as.ts", import.meta.url).pathname;
const cacheDir = await Deno.makeTempDir({ prefix: "hookbox-bench-as-" });

const t0 = performance.now();
const { bytes } = await compileAsHook(entry, { cacheDir });
const compileMs = performance.now() - t0;
const t1 = performance.now();
await compileAsHook(entry, { cacheDir });
const cachedMs = performance.now() - t1;

const events = [
  [
    "1 KB event (long command line)",
    LONG_EVENT,
  ],
  ["typical event (git status)", TYPICAL_EVENT],
] as const;

console.log(`AssemblyScript shell guard (${calls} calls per event)`);
console.log(`  compile ${compileMs.toFixed(0)} ms, cache hit ${cachedMs.toFixed(1)} ms`);
console.log(`  plugin ${bytes.length} B`);

const hook = await loadHook(
  denoFs,
  new URL("../hooks/shell-guard-as", import.meta.url).pathname,
  "platform",
);
const runtime = createWasmRuntime({ loadBytes: () => Promise.resolve(bytes) });
for (const [label, event] of events) {
  const request = {
    hook,
    input: new TextEncoder().encode(event),
    env: {},
    tenantId: "bench",
    limits: effectiveLimits(hook.manifest, DEFAULT_POLICY),
  };
  for (let i = 0; i < 1000; i++) await runtime.run(request);
  const ours = new Float64Array(calls);
  for (let i = 0; i < calls; i++) {
    const start = performance.now();
    const result = await runtime.run(request);
    ours[i] = performance.now() - start;
    if (result.exitCode !== 0) throw new Error(`unexpected result ${JSON.stringify(result)}`);
  }
  ours.sort();
  const us = (q: number) => (ours[Math.floor(q * (calls - 1))]! * 1000).toFixed(1);
  console.log(
    `  ${label}, ${event.length} B: warm call p50 ${us(0.5)} µs, p99 ${
      us(0.99)
    } µs (hookbox runtime, warm, metered)`,
  );
}
await runtime.close?.();
await Deno.remove(cacheDir, { recursive: true });
