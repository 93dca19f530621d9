import { createExecutor } from "../src/mod.ts";
import { compileHook } from "../src/compile/mod.ts";
import { createWasmRuntime } from "../src/runtime/wasm/mod.ts";
import { eventFor } from "./_bench_events.ts";
const meter = Deno.args[0] !== "nometer";
const wasm = createWasmRuntime({ loadBytes: async (h) => (await compileHook(h)).bytes, meterFuel: meter });
const ex = createExecutor({ projectDir: Deno.args[1] ?? "/tmp/fh", userDir: null, runtimes: { wasm } });
const ev = JSON.parse(eventFor("git status --short && ls -la src && " + "echo checking; ".repeat(40)));
for (let i = 0; i < 300; i++) await ex.dispatch(ev);
const t: number[] = [];
for (let i = 0; i < 20000; i++) { const t0 = performance.now(); await ex.dispatch(ev); t.push(performance.now() - t0); }
t.sort((a, b) => a - b);
console.log(meter ? "metered" : "unmetered", (t[10000]! * 1000).toFixed(1), "µs");
await ex.close();
