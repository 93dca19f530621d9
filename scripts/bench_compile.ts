/**
 * Benchmark of the JS pipeline on the built-in shell guard and a minimal
 * guard: compile time, plugin size, instance time from the Wizer snapshot,
 * call time through hookbox's wasm runtime (warm and fresh isolation) on a
 * ~1 KB pre-tool-call event, warm call time on a typical ~190 B event, and
 * the same script as a `node` subprocess.
 *
 *     deno run -A scripts/bench_compile.ts [calls]
 *
 * @module
 */
import { compileJsHook } from "../packages/compile/js.ts";
import { LONG_EVENT, TYPICAL_EVENT } from "./_bench_events.ts";
import { createWasmRuntime } from "../packages/runtime-wasm/mod.ts";
import type { RunRequest } from "../packages/core/runtime/types.ts";
import { manifestSchema } from "../packages/core/schema/manifest.ts";

const calls = Number(Deno.args[0] ?? 500);
/** Warm-up calls per runtime before measuring (steady state of a long-running host). */
const WARMUP = 2000;
const cacheDir = await Deno.makeTempDir({ prefix: "hookbox-bench-js-" });
/** A minimal guard: parse the event, test one regex, exit 0 or 2. */
const MINIMAL = `const e = JSON.parse(require("fs").readFileSync(0, "utf8"));
if (/\\brm\\s+-rf\\b/.test(e.tool_input.command)) {
  console.error("rm -rf is not allowed");
  process.exit(2);
}
`;
await Deno.writeTextFile(`${cacheDir}/minimal.js`, MINIMAL);
const ENTRIES = [
  new URL("../hooks/shell-guard/scripts/run.mjs", import.meta.url).pathname,
  `${cacheDir}/minimal.js`,
];
const event = LONG_EVENT;
const typical = TYPICAL_EVENT;

/** p50/p99 in µs of `n` runs of `fn`. */
async function measure(n: number, fn: () => unknown): Promise<string> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await fn();
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  const us = (q: number) => (samples[Math.floor(q * (n - 1))]! * 1000).toFixed(0);
  return `p50 ${us(0.5)} µs, p99 ${us(0.99)} µs`;
}

/** Benchmarks one hook script and prints its figures. */
async function bench(entry: string): Promise<void> {
  const dir = `${cacheDir}/${crypto.randomUUID()}`;
  let t = performance.now();
  const { bytes } = await compileJsHook(entry, { cacheDir: dir });
  const compileMs = performance.now() - t;
  t = performance.now();
  await compileJsHook(entry, { cacheDir: dir });
  const hitMs = performance.now() - t;
  const module = new WebAssembly.Module(bytes as Uint8Array<ArrayBuffer>);
  const stub = () => 0;
  const wasi = Object.fromEntries(
    WebAssembly.Module.imports(module).filter((i) => i.module !== "hookbox").map((
      i,
    ) => [i.name, stub]),
  );
  const imports = { wasi_snapshot_preview1: wasi, hookbox: { should_interrupt: stub } };
  const instance = await measure(calls, () => new WebAssembly.Instance(module, imports));
  const runs: string[] = [];
  for (const isolation of ["warm", "fresh"] as const) {
    runs.push(await runtimeFigures(entry, bytes, isolation, event));
  }
  runs.push(await runtimeFigures(entry, bytes, "warm", typical));
  const node = await measure(Math.min(calls, 30), () => nodeRun(entry));
  console.log(`${entry.split("/").slice(-3).join("/")} (event ${event.length} B, ${calls} calls)`);
  console.log(
    `  compile ${compileMs.toFixed(0)} ms (esbuild + Wizer), cache hit ${hitMs.toFixed(1)} ms`,
  );
  console.log(`  plugin ${bytes.length} B (${(bytes.length / 1024 / 1024).toFixed(2)} MiB)`);
  console.log(`  raw instance from snapshot (no instrumentation): ${instance}`);
  for (const line of runs) console.log(line);
  console.log(`  node subprocess: ${node}`);
}

/** Call figures through createWasmRuntime with the given isolation. */
async function runtimeFigures(
  entry: string,
  bytes: Uint8Array,
  isolation: "warm" | "fresh",
  input: string,
): Promise<string> {
  const manifest = manifestSchema().parse({
    name: "bench-guard",
    description: "bench",
    trigger: "pre-tool-call",
    isolation,
  });
  const runtime = createWasmRuntime({ loadBytes: () => Promise.resolve(bytes) });
  const request: RunRequest = {
    hook: {
      name: "bench-guard",
      level: "project",
      dir: "/bench",
      manifest,
      body: "",
      entry: { runtime: "wasm", format: "js", path: entry },
    },
    input: new TextEncoder().encode(input),
    env: {},
    limits: { memoryMb: 32, fuel: 1e9, outputKb: 64, inputKb: 64, moduleKb: 8192, timeoutMs: 5000 },
    tenantId: "bench",
  };
  const t = performance.now();
  const first = await runtime.run(request);
  const firstMs = performance.now() - t;
  if (first.exitCode !== 0) throw new Error(`unexpected result ${JSON.stringify(first)}`);
  // Long warm-up: V8 tiers the 650 KB interpreter up to TurboFan in the
  // background, on the same two cores; measuring earlier measures that too.
  for (let i = 0; i < WARMUP; i++) await runtime.run(request);
  const figures = await measure(calls, () => runtime.run(request));
  await runtime.close?.();
  const what = `${isolation}, ${input.length} B event`;
  return `  runtime ${what}: first call ${firstMs.toFixed(0)} ms, then ${figures}`;
}

async function nodeRun(entry: string): Promise<void> {
  const child = new Deno.Command("node", {
    args: [entry],
    stdin: "piped",
    stdout: "null",
    stderr: "null",
  })
    .spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(event));
  await w.close();
  await child.status;
}

await compileJsHook(ENTRIES[1]!, { cacheDir: `${cacheDir}/warmup` }); // builds/loads the engine once
for (const entry of ENTRIES) await bench(entry);
await Deno.remove(cacheDir, { recursive: true });
