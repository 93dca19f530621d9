/**
 * A thousand tenants' JS hooks in one edge Worker (issue 35): N tenants,
 * each with its own small JS hook (`_tenant_hooks.ts`: five kinds, each
 * tenant's own words), bundled by `hookbox bundle` and served by a real
 * workerd on loopback. Reports the bundle's size as deployed (each file
 * gzip'd), start to the first answer next to an "ok" Worker's start, a warm
 * JS hook's latency next to the "ok" Worker's, every tenant's first answer
 * and a second round over all of them, and the memory workerd and the
 * Worker's isolate hold after every tenant's first event.
 *
 *   deno run -A scripts/bench_edge_tenants.ts [--tenants 1000] [--requests 2000]
 *
 * Compiled hooks are cached by content in `.cache/bench-edge-tenants`
 * (`tenantStore` in `_tenant_hooks.ts`).
 *
 * @module
 */
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { writeBundle } from "../packages/deno/bundle.ts";
import { toolEvent } from "../tests/service/_api.ts";
import { startWorkerd, type Workerd } from "../tests/_workerd.ts";
import { RawHttpConnection } from "./_raw_http.ts";
import { median, percentile } from "./_stats.ts";
import { isolateMemory, writeOkWorker } from "./_workerd_bench.ts";
import { blockedBy, tenantStore } from "./_tenant_hooks.ts";
import { freePort } from "../tests/_workerd.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    tenants: { type: "string", default: "1000" },
    requests: { type: "string", default: "2000" },
  },
});
const TENANTS = Number(values.tenants);
const REQUESTS = Number(values.requests);

const dir = await Deno.makeTempDir({ prefix: "hookbox-bench-tenants-" });
const started = performance.now();
const { keys, h } = await tenantStore(dir, TENANTS);
console.error(
  `compiled and stored ${TENANTS} hooks in ${((performance.now() - started) / 1000).toFixed(0)} s`,
);
const bundled = performance.now();
const summary = await writeBundle({ store: h.store, out: `${dir}/out` });
const bundleSeconds = (performance.now() - bundled) / 1000;
await h.close();

// Size as deployed: every module the Worker is made of, each gzip'd.
const files = [
  "worker.js",
  ...[...Deno.readDirSync(`${dir}/out/chunks`)].map((e) => `chunks/${e.name}`),
  "images.bin",
  "registry.bin",
  ...[...Deno.readDirSync(`${dir}/out/plugins`)].map((e) => `plugins/${e.name}`),
];
let raw = 0;
let gzip = 0;
const sizes: Record<string, [number, number]> = {};
for (const file of files) {
  const bytes = await Deno.readFile(`${dir}/out/${file}`);
  const packed = gzipSync(bytes).length;
  raw += bytes.length;
  gzip += packed;
  const kind = file.startsWith("plugins/")
    ? "plugins/*.wasm"
    : file.startsWith("chunks/")
    ? "chunks/*.js (imported on demand)"
    : file;
  const [r, g] = sizes[kind] ?? [0, 0];
  sizes[kind] = [r + bytes.length, g + packed];
}

// An "ok" Worker, side by side: its start and its loopback latency are the floor.
await writeOkWorker(`${dir}/hello`);

const body = (i: number, command = "ls") =>
  JSON.stringify(toolEvent(command, { session_id: `s${i}` }));
const HEADERS = (key: string) => ({
  authorization: `Bearer ${key}`,
  "content-type": "application/json",
});
async function first(workerd: Workerd, i: number): Promise<number> {
  const conn = await RawHttpConnection.open(workerd.url);
  const t0 = performance.now();
  const answer = await conn.request("POST", "/v1/events", HEADERS(keys[i]!), body(i));
  const ms = performance.now() - t0;
  conn.close();
  if (answer.status !== 200) {
    throw new Error(`tenant ${i}: ${answer.status} ${new TextDecoder().decode(answer.body)}`);
  }
  return ms;
}

const POLL = { pollMs: 2 };
/** Starts of each Worker, interleaved (a start moves by tens of ms from one to the next). */
const STARTS = 11;
const starts: number[] = [];
/** Start to the first `/healthz` answer (the Worker builds its service on its first request). */
const healthy: number[] = [];
const helloStarts: number[] = [];
for (let round = 0; round < STARTS; round++) {
  const t0 = performance.now();
  const hello = await startWorkerd(`${dir}/hello`, {}, POLL);
  await (await fetch(`${hello.url}/`)).text();
  helloStarts.push(performance.now() - t0);
  await hello.stop();
  const t1 = performance.now();
  const w = await startWorkerd(`${dir}/out`, {}, POLL);
  healthy.push(performance.now() - t1);
  await first(w, round);
  starts.push(performance.now() - t1);
  await w.stop();
}

/** p50 and p99 of `n` sequential requests on one keep-alive connection. */
async function sequential(
  url: string,
  path: string,
  headers: Record<string, string>,
  text: string,
) {
  const conn = await RawHttpConnection.open(url);
  const samples: number[] = [];
  for (let i = -1; i < REQUESTS; i++) {
    const t0 = performance.now();
    const answer = await conn.request("POST", path, headers, text);
    if (answer.status !== 200) throw new Error(`status ${answer.status}: ${answer.body}`);
    if (i >= 0) samples.push(performance.now() - t0);
  }
  conn.close();
  const sorted = samples.sort((a, b) => a - b);
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) };
}

const hello = await startWorkerd(`${dir}/hello`, {}, POLL);
const floor = await sequential(hello.url, "/", {}, "{}");
await hello.stop();

const workerd = await startWorkerd(`${dir}/out`, {}, POLL);
const rss = async () => {
  const status = await Deno.readTextFile(`/proc/${workerd.pid}/status`);
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
};
const rssBefore = await rss();
// Every tenant's first answer, then a second round over all of them.
const firsts: number[] = [];
for (let i = 0; i < TENANTS; i++) firsts.push(await first(workerd, i));
const seconds: number[] = [];
for (let i = 0; i < TENANTS; i++) seconds.push(await first(workerd, i));
const rssAfter = await rss();
// Each tenant's own hook answers for it: the ones that block, block.
let blocked = 0;
let blocking = 0;
for (let i = 0; i < Math.min(TENANTS, 100); i++) {
  const what = blockedBy(i);
  if (what === null) continue;
  blocking++;
  const conn = await RawHttpConnection.open(workerd.url);
  const answer = await conn.request(
    "POST",
    "/v1/events",
    HEADERS(keys[i]!),
    JSON.stringify({ ...(toolEvent(what.command) as object), tool_name: what.tool_name }),
  );
  conn.close();
  if (JSON.parse(new TextDecoder().decode(answer.body)).decision === "block") blocked++;
}
const warm = await sequential(workerd.url, "/v1/events", HEADERS(keys[0]!), body(0, "ls -la"));
await workerd.stop();

const inspectorPort = freePort();
const inspected = await startWorkerd(`${dir}/out`, {}, {
  ...POLL,
  args: [`--inspector-addr=127.0.0.1:${inspectorPort}`],
});
for (let i = 0; i < TENANTS; i++) await first(inspected, i);
const isolate = await isolateMemory(inspectorPort);
Deno.kill(inspected.pid, "SIGKILL"); // with an inspector open, workerd does not stop on SIGTERM
await inspected.stop();
if (!Deno.env.get("KEEP")) await Deno.remove(dir, { recursive: true });
else console.log(dir);

const ms = (n: number) => `${n.toFixed(2)} ms`;
const mb = (n: number) => `${(n / 1e6).toFixed(2)} MB`;
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
console.log(
  `hookbox in workerd: ${TENANTS} tenants × 1 JS hook (${summary.plugins} prepared plugins in ${summary.modules} modules, ` +
    `bundled in ${bundleSeconds.toFixed(0)} s)`,
);
for (const [kind, [r, g]] of Object.entries(sizes)) {
  console.log(`  ${kind}: ${mb(r)}, ${mb(g)} gzip`);
}
console.log(`bundle as deployed: ${mb(raw)}, ${mb(gzip)} gzip (target ≤ 10 MB gzip)`);
console.log(
  `start to first answer: median ${ms(median(starts))}; an "ok" Worker: ${
    ms(median(helloStarts))
  }; ${(median(starts) / median(helloStarts)).toFixed(2)}× (target ≤ 100 ms); to /healthz ${
    ms(median(healthy))
  }`,
);
console.log(
  `warm JS hook (tenant 0): p50 ${ms(warm.p50)}, p99 ${ms(warm.p99)}; "ok" Worker p50 ${
    ms(floor.p50)
  }; ${(warm.p50 / floor.p50).toFixed(2)}× (target p50 ≤ 0.5 ms)`,
);
console.log(
  `every tenant's first answer: p50 ${ms(percentile(sorted(firsts), 0.5))}, p99 ${
    ms(percentile(sorted(firsts), 0.99))
  }; second round: p50 ${ms(percentile(sorted(seconds), 0.5))}, p99 ${
    ms(percentile(sorted(seconds), 0.99))
  } (new connection each)`,
);
console.log(`blocks as their tenants' hooks say: ${blocked} of ${blocking}`);
console.log(
  `workerd RSS: ${rssBefore.toFixed(0)} MB at start, ${
    rssAfter.toFixed(0)
  } MB after two rounds of ${TENANTS} tenants`,
);
console.log(
  `isolate after ${TENANTS} tenants' first events, garbage collected: JS heap ${
    isolate.heap.toFixed(1)
  } MB + ArrayBuffers ${isolate.backing.toFixed(1)} MB + WebAssembly memories ${
    isolate.wasm.toFixed(1)
  } MB = ${(isolate.heap + isolate.backing + isolate.wasm).toFixed(1)} MB (Workers' limit 128 MB)`,
);
Deno.exit(0);
