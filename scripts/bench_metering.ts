/**
 * Fuel-metering overhead on real plugins, one run, side by side: the same
 * hook through `createWasmRuntime` (warm isolation) with and without fuel
 * metering. Plugins: a minimal JS guard (QuickJS engine plugin: JSON.parse +
 * one regex over a 1 KB event) and the AssemblyScript shell guard.
 *
 * Run: `deno run -A scripts/bench_metering.ts [calls]`. V8 compiles wasm with
 * a baseline compiler first and tiers hot functions up later; pass
 * `--v8-flags=--wasm-tiering-budget=50000` to see the tiered-up figures.
 *
 * @module
 */
import { denoFs } from "../packages/host-deno/fs.ts";
import { compileHook } from "../packages/compile/mod.ts";
import { loadHook } from "../packages/core/hook/discover.ts";
import type { HookDefinition } from "../packages/core/hook/types.ts";
import { DEFAULT_POLICY, effectiveLimits } from "../packages/core/policy.ts";
import { createWasmRuntime } from "../packages/runtime-wasm/mod.ts";

const calls = Number(Deno.args[0] ?? 3000);
const dir = await Deno.makeTempDir({ prefix: "hookbox-bench-metering-" });
await Deno.mkdir(`${dir}/min-js/scripts`, { recursive: true });
await Deno.writeTextFile(
  `${dir}/min-js/HOOK.md`,
  "---\nname: min-js\ndescription: bench\ntrigger: pre-tool-call\nisolation: warm\n---\n",
);
await Deno.writeTextFile(
  `${dir}/min-js/scripts/run.js`,
  `const event = JSON.parse(require("fs").readFileSync(0, "utf8"));
if (/rm\\s+-rf\\s+\\//.test(event.tool_input.command || "")) {
  process.stderr.write("no");
  process.exit(2);
}
`,
);
const event = new TextEncoder().encode(JSON.stringify({
  event_type: "pre-tool-call",
  session_id: "bench",
  tool_name: "Bash",
  tool_input: {
    command: "ls -la && git status --short && " + "echo x; ".repeat(10) + "#".repeat(800),
  },
}));

async function p50(hook: HookDefinition, bytes: Uint8Array, meterFuel: boolean): Promise<number> {
  const runtime = createWasmRuntime({ loadBytes: () => Promise.resolve(bytes), meterFuel });
  const request = {
    hook,
    input: event,
    env: {},
    tenantId: "bench",
    limits: effectiveLimits(hook.manifest, DEFAULT_POLICY),
  };
  const first = await runtime.run(request);
  if (first.exitCode !== 0) throw new Error(`unexpected result ${JSON.stringify(first)}`);
  for (let i = 0; i < Math.min(500, calls); i++) await runtime.run(request);
  const times = new Float64Array(calls);
  for (let i = 0; i < calls; i++) {
    const start = performance.now();
    await runtime.run(request);
    times[i] = performance.now() - start;
  }
  await runtime.close?.();
  return times.sort()[calls >> 1]! * 1000;
}

const root = new URL("..", import.meta.url).pathname;
console.log(`fuel metering overhead, warm calls, ${event.byteLength} B event, p50 of ${calls}`);
for (const path of [`${dir}/min-js`, `${root}hooks/shell-guard-as`]) {
  const hook = await loadHook(denoFs, path, "platform");
  const { bytes } = await compileHook(hook, { cacheDir: `${dir}/cache` });
  const off = await p50(hook, bytes, false);
  const on = await p50(hook, bytes, true);
  console.log(
    `  ${hook.name}: unmetered ${off.toFixed(1)} µs, metered ${on.toFixed(1)} µs, overhead ${
      ((on / off - 1) * 100).toFixed(1)
    } %`,
  );
}
await Deno.remove(dir, { recursive: true });
