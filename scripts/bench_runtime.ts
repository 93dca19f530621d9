/**
 * Benchmark of the wasm runtime (issue 3), one run, side by side on the same
 * guard logic (tests/corpus/guard_*.wat: block when the event contains
 * "rm -rf"), on a ~1 KB pre-tool-call event:
 *
 *   (a) our runtime, warm instance      (b) our runtime, fresh instance
 *   (c) @extism/extism runInWorker      (d) subprocess: the same logic as a native C program
 *   (e) our runtime in worker mode, warm
 *
 * plus fuel-metering overhead on a CPU-heavy plugin and how fast a runaway
 * loop is stopped. Run: `deno run -A scripts/bench_runtime.ts`.
 *
 * @module
 */
import createPlugin from "@extism/extism";
import wabtInit from "wabt";
import type { HookDefinition } from "../packages/core/hook/types.ts";
import type { EffectiveLimits, RunRequest } from "../packages/core/runtime/types.ts";
import { createWasmRuntime, FUEL_SLICE } from "../packages/runtime-wasm/mod.ts";
import { manifestSchema } from "../packages/core/schema/manifest.ts";
import { instrument } from "../packages/rewriter/mod.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const wabt = await wabtInit();
const encoder = new TextEncoder();

function wat(source: string): Uint8Array {
  const module = wabt.parseWat("bench.wat", source, {});
  const { buffer } = module.toBinary({});
  module.destroy();
  return buffer;
}
const corpus = async (name: string) =>
  wat(await Deno.readTextFile(`${ROOT}tests/corpus/${name}.wat`));

const PLUGINS: Record<string, Uint8Array> = {
  guard_extism: await corpus("guard_extism"),
  guard_wasi: await corpus("guard_wasi"),
  loop_forever: await corpus("loop_forever"),
};

function hook(plugin: string, isolation: "fresh" | "warm"): HookDefinition {
  const name = plugin.replaceAll("_", "-");
  const manifest = manifestSchema().parse({
    name,
    description: "bench",
    trigger: "pre-tool-call",
    isolation,
  });
  const entry = { runtime: "wasm" as const, format: "wasm" as const, path: `${plugin}.wasm` };
  return { name, level: "project", dir: `/bench/${plugin}`, manifest, body: "", entry };
}

const LIMITS: EffectiveLimits = {
  memoryMb: 16,
  fuel: 100_000_000,
  outputKb: 64,
  inputKb: 64,
  moduleKb: 1024,
  timeoutMs: 5_000,
};
const EVENT = JSON.stringify({
  event_type: "pre-tool-call",
  timestamp: "2025-01-01T00:00:00Z",
  session_id: "bench-session",
  work_dir: "/home/dev/project",
  tool_name: "Bash",
  tool_use_id: "toolu_01",
  tool_input: { command: "git status && git diff --stat", description: "x".repeat(700) },
});
const INPUT = encoder.encode(EVENT);

const loadBytes = (h: HookDefinition) =>
  Promise.resolve(PLUGINS[h.entry.runtime === "wasm" ? h.entry.path.replace(/\.wasm$/, "") : ""]!);
const runtime = createWasmRuntime({ loadBytes });
const request = (h: HookDefinition, limits: Partial<EffectiveLimits> = {}): RunRequest => ({
  hook: h,
  input: INPUT,
  env: {},
  limits: { ...LIMITS, ...limits },
  tenantId: "bench",
});

interface Stats {
  p50: number;
  p99: number;
}

/** Per-call latency in µs over `n` calls after `warmup` unmeasured ones. */
async function measure(n: number, warmup: number, call: () => Promise<unknown>): Promise<Stats> {
  for (let i = 0; i < warmup; i++) await call();
  const times = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await call();
    times[i] = (performance.now() - start) * 1000;
  }
  times.sort();
  return { p50: times[Math.floor(n * 0.5)]!, p99: times[Math.floor(n * 0.99)]! };
}

async function expectExit0(result: Promise<{ exitCode: number | null }>) {
  const { exitCode } = await result;
  if (exitCode !== 0) throw new Error(`guard did not allow the event (exit ${exitCode})`);
}

// (a), (b): our runtime.
const rows: [string, Stats][] = [];
const warmHook = hook("guard_extism", "warm");
for (
  const [label, plugin, isolation, n] of [
    ["(a) hookbox warm, Extism-native", "guard_extism", "warm", 20_000],
    ["(a') hookbox warm, WASI command", "guard_wasi", "warm", 20_000],
    ["(b) hookbox fresh, Extism-native", "guard_extism", "fresh", 3_000],
    ["(b') hookbox fresh, WASI command", "guard_wasi", "fresh", 3_000],
  ] as const
) {
  const req = request(
    plugin === "guard_extism" && isolation === "warm" ? warmHook : hook(plugin, isolation),
  );
  rows.push([label, await measure(n, 2_000, () => expectExit0(runtime.run(req)))]);
}

// (c): the SDK's own worker path (no hookbox limits; SDK 1.0.3 has no timeoutMs).
const worker = await createPlugin(
  { wasm: [{ data: PLUGINS.guard_extism! }] },
  {
    useWasi: false,
    runInWorker: true,
    nodeWorkerArgs: { execArgv: [] },
  } as Parameters<typeof createPlugin>[1],
);
rows.push([
  "(c) @extism/extism runInWorker",
  await measure(2_000, 300, () => worker.call("hook", INPUT)),
]);
await worker.close();

// (e): our runtime in worker mode (defence in depth: terminated past the deadline), warm.
const inWorker = createWasmRuntime({ loadBytes, worker: true });
const workerReq = request(warmHook);
rows.push([
  "(e) hookbox worker mode, warm, Extism-native",
  await measure(5_000, 1_000, () => expectExit0(inWorker.run(workerReq))),
]);
await inWorker.close?.();

// (d): the same logic as a native executable `scripts/run` (C, built here with cc).
const dir = await Deno.makeTempDir({ prefix: "hookbox_bench_" });
await Deno.writeTextFile(
  `${dir}/run.c`,
  `#include <stdio.h>
#include <string.h>
int main(void) {
  static char buf[65536];
  size_t n = fread(buf, 1, sizeof buf - 1, stdin);
  buf[n] = 0;
  if (strstr(buf, "rm -rf")) { fputs("rm -rf is not allowed", stderr); return 2; }
  return 0;
}
`,
);
const cc = await new Deno.Command("cc", { args: ["-O2", "-o", `${dir}/run`, `${dir}/run.c`] })
  .output();
if (!cc.success) throw new Error(`cc failed: ${new TextDecoder().decode(cc.stderr)}`);
await Deno.writeTextFile(
  `${dir}/run.sh`,
  `#!/bin/sh
input=$(cat)
case "$input" in *"rm -rf"*) echo "rm -rf is not allowed" >&2; exit 2;; esac
exit 0
`,
);
await Deno.chmod(`${dir}/run.sh`, 0o755);
async function subprocess(command: string) {
  const child = new Deno.Command(command, { stdin: "piped", stdout: "piped", stderr: "piped" })
    .spawn();
  const writer = child.stdin.getWriter();
  await writer.write(INPUT);
  await writer.close();
  const { code } = await child.output();
  if (code !== 0) throw new Error(`subprocess exit ${code}`);
}
rows.push([
  "(d) subprocess scripts/run (native C)",
  await measure(300, 30, () => subprocess(`${dir}/run`)),
]);
rows.push([
  "(d') subprocess scripts/run.sh (POSIX sh)",
  await measure(300, 30, () => subprocess(`${dir}/run.sh`)),
]);
await Deno.remove(dir, { recursive: true });

// Fuel-metering overhead on a CPU-heavy plugin, metered vs unmetered.
const CPU_HEAVY = wat(`(module
  (memory (export "memory") 1)
  (func (export "work") (result i32)
    (local $round i32) (local $i i32) (local $h i32)
    (local.set $h (i32.const 0x811c9dc5))
    (loop $rounds
      (local.set $i (i32.const 0))
      (loop $bytes
        (i32.store8 (local.get $i) (i32.add (local.get $i) (local.get $round)))
        (local.set $h (i32.mul (i32.xor (local.get $h) (i32.load8_u (local.get $i)))
          (i32.const 0x01000193)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $bytes (i32.lt_u (local.get $i) (i32.const 65536))))
      (local.set $round (i32.add (local.get $round) (i32.const 1)))
      (br_if $rounds (i32.lt_u (local.get $round) (i32.const 200))))
    (local.get $h)))`);
async function cpuHeavy(meterFuel: boolean): Promise<number> {
  const bytes = instrument(CPU_HEAVY, { memoryPages: 16, meterFuel });
  let fuel: WebAssembly.Global | null = null;
  const imports = { hookbox: { out_of_fuel: () => (fuel!.value = BigInt(FUEL_SLICE)) } };
  const { instance } = await WebAssembly.instantiate(bytes, imports);
  fuel = (instance.exports.__hookbox_fuel as WebAssembly.Global | undefined) ?? null;
  const work = instance.exports.work as () => number;
  const times: number[] = [];
  for (let i = 0; i < 25; i++) {
    const start = performance.now();
    work();
    times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b)[12]!;
}
const unmetered = await cpuHeavy(false);
const metered = await cpuHeavy(true);

// A runaway loop: stopped by fuel, then the next call.
const loopStart = performance.now();
const stopped = await runtime.run(request(hook("loop_forever", "fresh")));
const loopMs = performance.now() - loopStart;
const nextReq = request(warmHook);
const nextStart = performance.now();
await expectExit0(runtime.run(nextReq));
const nextMs = performance.now() - nextStart;
await runtime.close?.();

const p50 = (label: string) => rows.find(([l]) => l.startsWith(label))![1].p50;
const fmt = (us: number) => (us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(1)} µs`);
const warm = rows[0]![1].p50;
console.log(`event: ${INPUT.length} bytes; Deno ${Deno.version.deno}, V8 ${Deno.version.v8}`);
console.log("| path | p50 | p99 | p50 / (a) |");
console.log("| --- | --- | --- | --- |");
for (const [label, s] of rows) {
  console.log(`| ${label} | ${fmt(s.p50)} | ${fmt(s.p99)} | ${(s.p50 / warm).toFixed(1)}× |`);
}
for (const [a, label] of [["(a) ", "Extism-native"], ["(a') ", "WASI command"]] as const) {
  const ours = p50(a);
  console.log(
    `warm ${label}: ${(p50("(c)") / ours).toFixed(1)}× faster than (c), ` +
      `${(p50("(d)") / ours).toFixed(0)}× than (d), ${(p50("(d')") / ours).toFixed(0)}× than (d')`,
  );
}
const overhead = ((metered / unmetered - 1) * 100).toFixed(1);
console.log(
  `\nfuel metering, CPU-heavy plugin (200 FNV-1a rounds over 64 KiB): unmetered ${
    unmetered.toFixed(2)
  } ms, ` +
    `metered ${metered.toFixed(2)} ms, overhead ${overhead} %`,
);
console.log(
  `runaway loop (fuel ${LIMITS.fuel}): ${stopped.failure?.outcome}/${stopped.failure?.detail} ` +
    `after ${loopMs.toFixed(1)} ms; next call served in ${nextMs.toFixed(3)} ms`,
);
