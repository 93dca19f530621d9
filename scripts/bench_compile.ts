/**
 * Benchmark of the JS pipeline on the built-in shell guard (a ~1 KB
 * pre-tool-call event): compile time, plugin size, instance time from the
 * Wizer snapshot, call time through hookbox's wasm runtime (warm and fresh
 * isolation), and the same script as a `node` subprocess.
 *
 *     deno run -A scripts/bench_compile.ts [calls]
 *
 * @module
 */
import { compileJsHook } from "../src/compile/js.ts";
import { createWasmRuntime } from "../src/runtime/wasm/mod.ts";
import type { RunRequest } from "../src/runtime/types.ts";
import { manifestSchema } from "../src/schema/manifest.ts";

const calls = Number(Deno.args[0] ?? 500);
const entry = new URL("../hooks/shell-guard/scripts/run.js", import.meta.url).pathname;
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

const cacheDir = await Deno.makeTempDir({ prefix: "hookbox-bench-js-" });
await compileJsHook(entry, { cacheDir: `${cacheDir}/warmup` }); // builds/loads the engine once
let t = performance.now();
const { bytes } = await compileJsHook(entry, { cacheDir });
const compileMs = performance.now() - t;
t = performance.now();
await compileJsHook(entry, { cacheDir });
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

const results: string[] = [];
for (const isolation of ["warm", "fresh"] as const) {
  const manifest = manifestSchema.parse({
    name: "shell-guard",
    description: "bench",
    trigger: "pre-tool-call",
    isolation,
  });
  const hook = {
    name: "shell-guard",
    level: "project" as const,
    dir: "/bench",
    manifest,
    body: "",
  };
  const runtime = createWasmRuntime({ loadBytes: () => Promise.resolve(bytes) });
  const request: RunRequest = {
    hook: { ...hook, entry: { runtime: "wasm", format: "js", path: entry } },
    input: new TextEncoder().encode(event),
    env: {},
    limits: { memoryMb: 32, fuel: 1e9, outputKb: 64, inputKb: 64, moduleKb: 8192, timeoutMs: 5000 },
    tenantId: "bench",
  };
  t = performance.now();
  const first = await runtime.run(request);
  const firstMs = performance.now() - t;
  if (first.exitCode !== 0) throw new Error(`unexpected result ${JSON.stringify(first)}`);
  for (let i = 0; i < 20; i++) await runtime.run(request);
  results.push(
    `  runtime ${isolation}: first call ${firstMs.toFixed(0)} ms, then ${await measure(
      calls,
      () => runtime.run(request),
    )}`,
  );
  await runtime.close?.();
}

const node = await measure(Math.min(calls, 30), async () => {
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
});

console.log(
  `JS shell guard (${entry.split("/hooks/")[1]}, event ${event.length} B, ${calls} calls)`,
);
console.log(
  `  compile ${compileMs.toFixed(0)} ms (esbuild + Wizer), cache hit ${hitMs.toFixed(1)} ms`,
);
console.log(`  plugin ${bytes.length} B (${(bytes.length / 1024 / 1024).toFixed(2)} MiB)`);
console.log(`  raw instance from snapshot (no instrumentation): ${instance}`);
for (const line of results) console.log(line);
console.log(`  node subprocess: ${node}`);
await Deno.remove(cacheDir, { recursive: true });
