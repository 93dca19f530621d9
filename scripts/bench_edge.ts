/**
 * hookbox in a real workerd (loopback only): `hookbox bundle` from a store
 * with a small WebAssembly guard, the QuickJS `shell-guard` (warm) and N
 * tenants that each have their own warm `shell-guard`; then start-up to the
 * first answer, sequential `POST /v1/events` latency per hook (with Deno's
 * `fetch` and with a lean keep-alive client, each next to an "ok" Worker's
 * floor), workerd's resident memory after every tenant's warm instance was
 * made, and what the Worker's isolate itself holds.
 *
 *   deno run -A scripts/bench_edge.ts [--tenants 150] [--requests 2000]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { writeBundle } from "../packages/deno/bundle.ts";
import { compileHook } from "../packages/compile/mod.ts";
import { denoFs } from "../packages/host-deno/fs.ts";
import { loadHook } from "../packages/core/hook/discover.ts";
import { openSqliteStore } from "../packages/store-sqlite/sqlite.ts";
import { encodeBase64 } from "../tests/_base64.ts";
import { harness, hookMd, toolEvent, wasmFolder } from "../tests/service/_api.ts";
import { freePort, startWorkerd } from "../tests/_workerd.ts";
import { RawHttpConnection } from "./_raw_http.ts";
import { median, percentile } from "./_stats.ts";
import { isolateMemory, writeOkWorker } from "./_workerd_bench.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    tenants: { type: "string", default: "150" },
    requests: { type: "string", default: "2000" },
  },
});
const TENANTS = Number(values.tenants);
const REQUESTS = Number(values.requests);

const dir = await Deno.makeTempDir({ prefix: "hookbox-bench-edge-" });
const h = await harness(openSqliteStore(`${dir}/hookbox.db`));
const guardKey = await h.tenant("guard");
const up = await h.call("PUT", "/v1/hooks/guard", {
  key: guardKey,
  body: await wasmFolder("guard", "guard_wasi", "isolation: warm\n"),
});
if (up.status !== 201) throw new Error(JSON.stringify(up.body));
const root = new URL("../hooks/shell-guard", import.meta.url).pathname;
const { bytes } = await compileHook(await loadHook(denoFs, root, "project"));
const shellGuard = {
  files: {
    "HOOK.md": hookMd("shell-guard", "isolation: warm\ntimeout: 5000\nlimits:\n  memory_mb: 32\n"),
    "plugin.wasm": { base64: encodeBase64(bytes) },
  },
};
const keys: string[] = [];
for (let i = 0; i < TENANTS; i++) {
  const key = await h.tenant(`t${i}`);
  const res = await h.call("PUT", "/v1/hooks/shell-guard", { key, body: shellGuard });
  if (res.status !== 201) throw new Error(JSON.stringify(res.body));
  keys.push(key);
}
const summary = await writeBundle({ store: h.store, out: `${dir}/out` });
await h.close();
// The Worker's code (with the modules it imports on demand) and its registry (deflated already),
// without the plugins and their images.
let size = 0;
let gzip = 0;
const chunks = [...Deno.readDirSync(`${dir}/out/chunks`)].map((e) => `chunks/${e.name}`);
for (const file of ["worker.js", ...chunks, "registry.bin"]) {
  size += (await Deno.stat(`${dir}/out/${file}`)).size;
  gzip += (await new Response(
    (await Deno.open(`${dir}/out/${file}`)).readable.pipeThrough(new CompressionStream("gzip")),
  ).arrayBuffer()).byteLength;
}

const post = async (url: string, key: string, command: string) => {
  const res = await fetch(`${url}/v1/events`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body: JSON.stringify(toolEvent(command)),
  });
  const body = await res.json();
  if (res.status !== 200) throw new Error(JSON.stringify(body));
  return body;
};

// Baseline, side by side: a Worker that answers every request with "ok".
await writeOkWorker(`${dir}/hello`);
const POLL = { pollMs: 2 };
const helloStarts: number[] = [];
const helloLatency: number[] = [];
const helloLean: number[] = [];
const starts: number[] = [];
// Start-up varies by tens of ms from run to run on this VM: seven starts of each, interleaved.
const START_ROUNDS = 7;
for (let round = 0; round < START_ROUNDS; round++) {
  const t0 = performance.now();
  const hello = await startWorkerd(`${dir}/hello`, {}, POLL);
  helloStarts.push(performance.now() - t0);
  if (round === START_ROUNDS - 1) {
    for (let i = 0; i < REQUESTS; i++) {
      const t1 = performance.now();
      await (await fetch(`${hello.url}/`, { method: "POST", body: "{}" })).text();
      helloLatency.push(performance.now() - t1);
    }
    const conn = await RawHttpConnection.open(hello.url);
    for (let i = 0; i < REQUESTS; i++) {
      const t1 = performance.now();
      await conn.request("POST", "/", {}, "{}");
      helloLean.push(performance.now() - t1);
    }
    conn.close();
  }
  await hello.stop();
  if (round === START_ROUNDS - 1) break;
  const t2 = performance.now();
  const w = await startWorkerd(`${dir}/out`, {}, POLL);
  await post(w.url, guardKey, "ls");
  starts.push(performance.now() - t2);
  await w.stop();
}
const spawned = performance.now();
const workerd = await startWorkerd(`${dir}/out`, {}, POLL);
const healthy = performance.now() - spawned;
await post(workerd.url, guardKey, "ls");
starts.push(performance.now() - spawned);
const helloStart = median(helloStarts);
const helloP50 = median(helloLatency);
const helloLeanP50 = median(helloLean);

function percentiles(samples: number[]) {
  const sorted = samples.sort((a, b) => a - b);
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) };
}
async function sequential(key: string, command: string) {
  await post(workerd.url, key, command);
  const samples: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const t0 = performance.now();
    await post(workerd.url, key, command);
    samples.push(performance.now() - t0);
  }
  return percentiles(samples);
}
/**
 * The same with a lean keep-alive client that writes each request in one
 * piece (scripts/_raw_http.ts, as wrk or oha do): Deno's `fetch` adds about
 * 0.1 ms of its own per request on this machine.
 */
async function sequentialLean(key: string, command: string) {
  const conn = await RawHttpConnection.open(workerd.url);
  const body = JSON.stringify(toolEvent(command));
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  const samples: number[] = [];
  for (let i = -1; i < REQUESTS; i++) {
    const t0 = performance.now();
    const answer = await conn.request("POST", "/v1/events", headers, body);
    if (answer.status !== 200) throw new Error(`status ${answer.status}`);
    if (i >= 0) samples.push(performance.now() - t0);
  }
  conn.close();
  return percentiles(samples);
}
const rss = async () => {
  const status = await Deno.readTextFile(`/proc/${workerd.pid}/status`);
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
};

const guard = await sequential(guardKey, "ls -la");
const quickjs = await sequential(keys[0]!, "ls -la");
const guardLean = await sequentialLean(guardKey, "ls -la");
const quickjsLean = await sequentialLean(keys[0]!, "ls -la");
const before = await rss();
let blocked = 0;
for (const key of keys) {
  if ((await post(workerd.url, key, "rm -rf /")).decision === "block") blocked++;
}
const after = await rss();
await workerd.stop();

// What the isolate itself holds (the figure a Workers memory limit counts, unlike the process's
// RSS, which includes workerd, compiled code and freed memory not returned): JS heap plus
// ArrayBuffer and WebAssembly memory backing stores, read over the inspector protocol, in a
// fresh workerd that served the same tenants' first events.
const inspectorPort = freePort();
const inspected = await startWorkerd(`${dir}/out`, {}, {
  ...POLL,
  args: [`--inspector-addr=127.0.0.1:${inspectorPort}`],
});
for (const key of keys) await post(inspected.url, key, "rm -rf /");
const isolate = await isolateMemory(inspectorPort);
Deno.kill(inspected.pid, "SIGKILL"); // with an inspector open, workerd does not stop on SIGTERM
await inspected.stop();
if (!Deno.env.get("KEEP")) await Deno.remove(dir, { recursive: true });
else console.log(dir);

const ms = (n: number) => `${n.toFixed(2)} ms`;
console.log(
  `hookbox in workerd: ${summary.plugins} prepared plugins, ${TENANTS} shell-guard tenants`,
);
console.log(
  `worker.js, chunks/*.js and registry.bin: ${size} bytes, ${gzip} gzip (no plugins; ` +
    `worker.js ${summary.workerBytes}, chunks ${summary.chunkBytes})`,
);
console.log(
  `start to first answer: median ${ms(median(starts))} of ${starts.length} (last: /healthz after ${
    ms(healthy)
  }); an "ok" Worker: ${ms(helloStart)}; ratio ${
    (median(starts) / helloStart).toFixed(2)
  }× (target ≤ 100 ms)`,
);
console.log(
  `loopback floor ("ok" Worker, same clients): p50 ${ms(helloLeanP50)} lean client, ${
    ms(helloP50)
  } fetch`,
);
console.log(
  `small guard (guard_wasi, warm): p50 ${ms(guardLean.p50)}, p99 ${
    ms(guardLean.p99)
  } lean client; p50 ${ms(guard.p50)}, p99 ${ms(guard.p99)} fetch (target p50 ≤ 0.5 ms)`,
);
console.log(
  `QuickJS shell-guard (warm): p50 ${ms(quickjsLean.p50)}, p99 ${
    ms(quickjsLean.p99)
  } lean client; p50 ${ms(quickjs.p50)}, p99 ${ms(quickjs.p99)} fetch (target p50 ≤ 1 ms)`,
);
console.log(
  `workerd RSS: ${before.toFixed(0)} MB before, ${
    after.toFixed(0)
  } MB after ${TENANTS} tenants' warm shell-guard (${blocked} blocked rm -rf /; target < 128 MB)`,
);
console.log(
  `isolate after ${TENANTS} tenants' first events, garbage collected: JS heap ${
    isolate.heap.toFixed(1)
  } MB + ArrayBuffers ${isolate.backing.toFixed(1)} MB + WebAssembly memories ${
    isolate.wasm.toFixed(1)
  } MB = ${(isolate.heap + isolate.backing + isolate.wasm).toFixed(1)} MB (target < 128 MB)`,
);
Deno.exit(0);
