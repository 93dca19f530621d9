/**
 * Benchmark of the AssemblyScript shell guard: compile time, plugin size and
 * warm call time through `@extism/extism` (foreground, no WASI) on a ~1 KB
 * pre-tool-call event. Run: `deno run -A scripts/bench_as.ts [calls]`.
 *
 * @module
 */

import createPlugin from "@extism/extism";
import { compileAsHook } from "../src/compile/as.ts";

const calls = Number(Deno.args[0] ?? 20_000);
const entry = new URL("../hooks/shell-guard-as/scripts/run.as.ts", import.meta.url).pathname;
const cacheDir = await Deno.makeTempDir({ prefix: "hookbox-bench-as-" });

const t0 = performance.now();
const { bytes } = await compileAsHook(entry, { cacheDir });
const compileMs = performance.now() - t0;
const t1 = performance.now();
await compileAsHook(entry, { cacheDir });
const cachedMs = performance.now() - t1;

const event = JSON.stringify({
  event_type: "pre-tool-call",
  timestamp: "2025-01-01T00:00:00Z",
  session_id: "bench",
  work_dir: "/work",
  tool_name: "Bash",
  tool_input: {
    command: "ls -la && git status --short && " + "echo x; ".repeat(10) + "#".repeat(800),
  },
  tool_use_id: "t1",
});

const t2 = performance.now();
const plugin = await createPlugin({ wasm: [{ data: bytes }] }, { useWasi: false });
const coldMs = performance.now() - t2;
for (let i = 0; i < 1000; i++) await plugin.call("hook", event);
const samples = new Float64Array(calls);
for (let i = 0; i < calls; i++) {
  const start = performance.now();
  await plugin.call("hook", event);
  samples[i] = performance.now() - start;
}
samples.sort();
const us = (q: number) => (samples[Math.floor(q * (calls - 1))]! * 1000).toFixed(1);
console.log(`AssemblyScript shell guard (event ${event.length} B, ${calls} calls)`);
console.log(`  compile ${compileMs.toFixed(0)} ms, cache hit ${cachedMs.toFixed(1)} ms`);
console.log(`  plugin ${bytes.length} B, cold instance ${coldMs.toFixed(2)} ms`);
console.log(`  warm call p50 ${us(0.5)} µs, p99 ${us(0.99)} µs (Extism JS SDK)`);
await plugin.close();
await Deno.remove(cacheDir, { recursive: true });
