/**
 * Load test of `hookbox serve` (bounded, loopback only). Starts the server as
 * a separate process, creates tenants with three small WebAssembly hooks
 * each, and runs N concurrent clients × M events spread over the tenants —
 * once with one hostile tenant whose hooks run at their limits, once without
 * it. Prints throughput, p50/p99 per tenant, errors, the audit rows committed
 * against the answers, and the ratio of the other tenants' p99 with and
 * without the hostile one.
 *
 *   deno run -A scripts/load.ts [--clients 100] [--events 60000] [--tenants 4]
 *     [--db sqlite|postgres|URL] [--workers N] [--server-flag=--cpu-prof ...]
 *     [--calm-only] [--client raw|fetch] [--timeline] [--hostile-clients N]
 *     [--hostile mixed|spin|memory|output|many|quota|each] [--processes 1,2]
 *
 * `--hostile` picks what the hostile tenant's hooks do (see `HOSTILE`):
 * `mixed` (the default) a fuel loop, a memory bomb and an output flood;
 * `spin` a loop to the default fuel; `memory` 256 MiB of memory; `output`
 * 4 MiB of output; `many` 100 hooks on every event; `quota` the mixed three
 * under `max_concurrent` 2 and `fuel_per_minute` 3e9, so most of its events
 * are refused. `each` runs every class in turn against one calm run and
 * prints a table of the ratios.
 *
 * By default the hostile tenant takes its turn among the clients' events, so
 * its slow answers also slow the rate everyone sends at. `--hostile-clients N`
 * gives it N clients of its own instead, sending as fast as it is answered for
 * as long as the others run: the others keep their own rate, and what the
 * hostile tenant takes from them shows in full. Those clients run on a thread
 * of their own (`_load_own_clients.ts`), so reading the hostile tenant's
 * answers never delays the loop that times the others' requests.
 *
 * 60,000 events by default: a run of 20,000 lasts about 1.5 s, most of it
 * the process's first second, which says more about start-up than serving.
 *
 * `--timeline` prints the latencies of the requests sent in each quarter
 * second (the first ones meet a server whose tenants' hooks are still cold).
 *
 * Each client is one keep-alive connection. `--client raw` (the default)
 * speaks HTTP/1.1 over a plain TCP connection (scripts/_raw_http.ts), which
 * costs the load generator a fraction of `fetch`'s CPU, so on a two-core
 * machine the server gets the cores (as with `wrk` or `oha`); `--client
 * fetch` uses Deno's `fetch`.
 *
 * `--db postgres` starts a throwaway PostgreSQL cluster (Debian's package).
 *
 * `--processes 1,2` (with `--calm-only`) runs the calm load once per count
 * of `serve --processes` and prints their throughput side by side, with the
 * ratio to the first; audit rows are counted in the store after each run
 * (every process commits its own).
 *
 * @module
 */
import process from "node:process";
import { parseArgs } from "node:util";
import wabtInit from "wabt";
import { freshDatabase } from "../tests/_pg.ts";
import { RawHttpConnection } from "./_raw_http.ts";
import { call, type ServeProcess, startServe } from "./_serve_process.ts";
import { openStore } from "../packages/deno/serve/serve.ts";
import { percentile } from "./_stats.ts";
import { loadEvent } from "./_load_event.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    clients: { type: "string", default: "100" },
    events: { type: "string", default: "60000" },
    tenants: { type: "string", default: "4" },
    db: { type: "string", default: "sqlite" },
    workers: { type: "string" },
    "server-flag": { type: "string", multiple: true, default: [] },
    "calm-only": { type: "boolean", default: false },
    timeline: { type: "boolean", default: false },
    "hostile-clients": { type: "string", default: "0" },
    client: { type: "string", default: "raw" },
    hostile: { type: "string", default: "mixed" },
    processes: { type: "string", default: "1" },
  },
});
const PROCESS_COUNTS = values.processes!.split(",").map(Number);
if (PROCESS_COUNTS.some((n) => !Number.isInteger(n) || n < 1)) {
  console.error(`--processes takes counts such as 1,2, not ${values.processes}`);
  Deno.exit(2);
}
let processes = PROCESS_COUNTS[0]!;
const CLIENTS = Number(values.clients);
const EVENTS = Number(values.events);
const TENANTS = Number(values.tenants);
/** With N > 0 the hostile tenant has N clients of its own, sending for as long as the others do. */
const HOSTILE_CLIENTS = Number(values["hostile-clients"]);
const ADMIN = "load-test-admin-key-0123456789";
const ROOT = new URL("..", import.meta.url).pathname;
/** Requests sent in this first part of a run are left out of the "steady" p99 line. */
const WARM_UP_MS = 1000;
const wabt = await wabtInit();
if (values.client !== "raw" && values.client !== "fetch") {
  console.error(`--client must be raw or fetch, not ${values.client}`);
  Deno.exit(2);
}

/** What the hostile tenant's hooks do: [hook, corpus plugin, extra HOOK.md lines]. */
interface Hostility {
  hooks: [string, string, string][];
  /** The tenant's policy, if any. */
  policy?: Record<string, number>;
}
const MIXED: Hostility["hooks"] = [
  ["spin", "loop_forever", "limits:\n  fuel: 50000000\n"],
  ["bomb", "memory_bomb", "limits:\n  memory_mb: 16\n"],
  ["flood", "output_flood", "limits:\n  output_kb: 64\n"],
];
const HOSTILE: Record<string, Hostility> = {
  mixed: { hooks: MIXED },
  spin: { hooks: [["spin", "loop_forever", ""]] },
  memory: { hooks: [["bomb", "memory_bomb", "limits:\n  memory_mb: 256\n"]] },
  output: { hooks: [["flood", "output_flood", "limits:\n  output_kb: 4096\n"]] },
  many: {
    hooks: Array.from({ length: 100 }, (_, i) => [`guard-${i}`, "guard_wasi", "isolation: warm\n"]),
  },
  quota: { hooks: MIXED, policy: { max_concurrent: 2, fuel_per_minute: 3e9 } },
};
const CLASSES = values.hostile === "each" ? Object.keys(HOSTILE) : [values.hostile!];
for (const name of CLASSES) {
  if (!(name in HOSTILE)) {
    console.error(
      `--hostile must be each or one of ${Object.keys(HOSTILE).join(", ")}, not ${name}`,
    );
    Deno.exit(2);
  }
}

/** Sends one event over the client's connection; returns the status. */
type Sender = (key: string, body: string) => Promise<number>;

async function sender(url: string): Promise<Sender> {
  if (values.client === "fetch") {
    return async (key, body) => {
      const res = await fetch(`${url}/v1/events`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}` },
        body,
      });
      await res.arrayBuffer();
      return res.status;
    };
  }
  const conn = await RawHttpConnection.open(url);
  return async (key, body) =>
    (await conn.request("POST", "/v1/events", {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
    }, body)).status;
}

async function corpus(name: string): Promise<string> {
  const mod = wabt.parseWat(name, await Deno.readTextFile(`${ROOT}tests/corpus/${name}.wat`), {
    exceptions: true,
  });
  const bytes = mod.toBinary({}).buffer as Uint8Array;
  mod.destroy();
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(text);
}

function hookMd(name: string, extra = ""): string {
  return `---\nname: ${name}\ndescription: load\ntrigger: pre-tool-call\n${extra}---\n`;
}

function clientCpu(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

function serve(db: string): Promise<ServeProcess> {
  return startServe({
    db,
    adminKey: ADMIN,
    denoFlags: values["server-flag"]!,
    args: [
      ...values.workers !== undefined ? ["--workers", values.workers] : [],
      "--processes",
      String(processes),
    ],
  });
}

interface RunFigures {
  answers: number;
  seconds: number;
  errors: Record<string, number>;
  p99: Record<string, number>;
  audited: number;
}

async function run(db: string, hostility: Hostility | null): Promise<RunFigures> {
  const hostile = hostility !== null;
  const server = await serve(db);
  const guard = await corpus("guard_wasi");
  const keys: Record<string, string> = {};
  const names = Array.from({ length: TENANTS }, (_, i) => `tenant-${i + 1}`);
  // With clients of its own the hostile tenant's run is compared with one where a fifth,
  // well-behaved tenant ("busy", the others' hooks) has those clients: the same load.
  const apart = HOSTILE_CLIENTS > 0;
  const own = hostile ? "hostile" : apart ? "busy" : null;
  if (own !== null) names.push(own);
  for (const name of names) {
    await call(server.url, "POST", "/v1/tenants", ADMIN, { id: name });
    keys[name] = (await call(server.url, "POST", `/v1/tenants/${name}/keys`, ADMIN, {})).body.key;
  }
  for (const name of names.filter((n) => n !== "hostile")) {
    for (const hook of ["guard-a", "guard-b", "guard-c"]) {
      const files = {
        "HOOK.md": hookMd(hook, "isolation: warm\n"),
        "plugin.wasm": { base64: guard },
      };
      const up = await call(server.url, "PUT", `/v1/hooks/${hook}`, keys[name]!, { files });
      if (up.status !== 201) throw new Error(JSON.stringify(up.body));
    }
  }
  if (hostility !== null) {
    const plugins = new Map<string, string>();
    for (const [hook, plugin, extra] of hostility.hooks) {
      if (!plugins.has(plugin)) plugins.set(plugin, await corpus(plugin));
      const files = {
        "HOOK.md": hookMd(hook, extra),
        "plugin.wasm": { base64: plugins.get(plugin)! },
      };
      const up = await call(server.url, "PUT", `/v1/hooks/${hook}`, keys.hostile!, { files });
      if (up.status !== 201) throw new Error(JSON.stringify(up.body));
    }
    if (hostility.policy !== undefined) {
      const set = await call(
        server.url,
        "PUT",
        "/v1/tenants/hostile/policy",
        ADMIN,
        hostility.policy,
      );
      if (set.status !== 200) throw new Error(JSON.stringify(set.body));
    }
  }
  const latencies: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  const steady: number[] = []; // requests sent after the first WARM_UP_MS, but the own-client tenant's
  const timeline: [number, number][] = []; // [sent at, latency] with --timeline
  const errors: Record<string, number> = {};
  let next = 0;
  let answers = 0;
  const started = performance.now();
  const serverCpu0 = await server.cpu();
  const mainCpu0 = await server.mainThreadCpu();
  const clientCpu0 = clientCpu();
  const senders = await Promise.all(Array.from({ length: CLIENTS }, () => sender(server.url)));
  const turns = apart ? names.filter((n) => n !== own) : names;
  // The own-client tenant's clients run on a thread of their own (scripts/_load_own_clients.ts).
  const ownClients = apart
    ? new Worker(new URL("./_load_own_clients.ts", import.meta.url), { type: "module" })
    : null;
  const ownRun = ownClients === null ? Promise.resolve() : new Promise<void>((resolve, reject) => {
    ownClients.onerror = (e) => {
      e.preventDefault();
      reject(new Error(`the own-client tenant's clients failed: ${e.message}`));
    };
    ownClients.onmessage = (message) => {
      if (message.data === "ready") return;
      const { latencies: own_, answers: n, errors: failed } = message.data as {
        latencies: number[];
        answers: number;
        errors: Record<string, number>;
      };
      latencies[own!]!.push(...own_);
      answers += n;
      for (const [k, v] of Object.entries(failed)) errors[k] = (errors[k] ?? 0) + v;
      resolve();
    };
  });
  if (ownClients !== null) {
    const ready = new Promise((resolve) =>
      ownClients.addEventListener("message", resolve, { once: true })
    );
    ownClients.postMessage({ url: server.url, key: keys[own!]!, clients: HOSTILE_CLIENTS });
    await ready;
  }
  await Promise.all(senders.map(async (send) => {
    for (;;) {
      const i = next++;
      if (i >= EVENTS) return;
      const tenant = turns[i % turns.length]!;
      const t0 = performance.now();
      try {
        const status = await send(keys[tenant]!, JSON.stringify(loadEvent(i)));
        if (status === 200) answers++;
        else errors[status] = (errors[status] ?? 0) + 1;
      } catch (err) {
        errors[String(err)] = (errors[String(err)] ?? 0) + 1;
      }
      latencies[tenant]!.push(performance.now() - t0);
      if (t0 - started >= WARM_UP_MS && tenant !== own) steady.push(performance.now() - t0);
      if (values.timeline) timeline.push([t0 - started, performance.now() - t0]);
    }
  }));
  ownClients?.postMessage("stop");
  await ownRun;
  const seconds = (performance.now() - started) / 1000;
  const serverCpu = await server.cpu() - serverCpu0;
  const mainCpu = await server.mainThreadCpu() - mainCpu0;
  const ownCpu = clientCpu() - clientCpu0;
  const metrics = await (await fetch(`${server.url}/metrics`, {
    headers: { authorization: `Bearer ${ADMIN}` },
  })).text();
  // Of the process that answered this scrape: all of them when there is one.
  const commits = Number(/hookbox_audit_commits (\d+)/.exec(metrics)?.[1] ?? NaN);
  await server.stop();
  // Counted in the store: every process commits its own rows.
  const store = await openStore(db);
  let audited = 0;
  for (const name of names) audited += await store.countAudit(name);
  await store.close();
  const p99: Record<string, number> = {};
  console.log(
    `\n${hostile ? "with" : "without"} the hostile tenant: ${answers} answers in ${
      seconds.toFixed(1)
    } s = ${(answers / seconds).toFixed(0)}/s; errors ${
      JSON.stringify(errors)
    }; audit rows ${audited} in ${commits} commits`,
  );
  if (processes > 1) console.log(`  CPU: not measured (${processes} server processes)`);
  else {console.log(
      `  CPU: server ${serverCpu.toFixed(1)} s (${
        (serverCpu / seconds * 100).toFixed(0)
      }% of one core, ${(serverCpu / answers * 1e6).toFixed(0)} µs per answer; its request thread ${
        (mainCpu / seconds * 100).toFixed(0)
      }%, ${(mainCpu / answers * 1e6).toFixed(0)} µs per answer), load client ${
        ownCpu.toFixed(1)
      } s (${(ownCpu / seconds * 100).toFixed(0)}%)`,
    );}
  for (const name of names) {
    const sorted = latencies[name]!.sort((a, b) => a - b);
    p99[name] = percentile(sorted, 0.99);
    console.log(
      `  ${name.padEnd(10)} n=${sorted.length} p50 ${percentile(sorted, 0.5).toFixed(1)} ms  p99 ${
        p99[name]!.toFixed(1)
      } ms`,
    );
  }
  const sortedSteady = steady.sort((a, b) => a - b);
  console.log(
    `  after the first ${WARM_UP_MS / 1000} s (JIT and first instances warm), ${
      own === null ? "all tenants" : `all but ${own}`
    }: n=${sortedSteady.length} p50 ${percentile(sortedSteady, 0.5).toFixed(1)} ms  p99 ${
      percentile(sortedSteady, 0.99).toFixed(1)
    } ms`,
  );
  if (values.timeline) printTimeline(timeline);
  return { answers, seconds, errors, p99, audited };
}

/** Prints the latencies of the requests sent in each quarter second of the run. */
function printTimeline(sent: [number, number][]): void {
  const windows = new Map<number, number[]>();
  for (const [at, ms] of sent) {
    const w = Math.floor(at / 250);
    const list = windows.get(w);
    if (list) list.push(ms);
    else windows.set(w, [ms]);
  }
  for (const [w, list] of [...windows].sort((a, b) => a[0] - b[0])) {
    list.sort((a, b) => a - b);
    console.log(
      `  ${(w * 0.25).toFixed(2).padStart(6)} s  n=${String(list.length).padStart(5)}  p50 ${
        percentile(list, 0.5).toFixed(1)
      } ms  p99 ${percentile(list, 0.99).toFixed(1)} ms  max ${list.at(-1)!.toFixed(1)} ms`,
    );
  }
}

async function database(): Promise<string> {
  if (values.db === "sqlite") {
    return `sqlite:${await Deno.makeTempDir({ prefix: "hookbox-load-" })}/hookbox.db`;
  }
  if (values.db === "postgres") return await freshDatabase();
  return values.db!;
}

console.log(
  `hookbox load: ${CLIENTS} ${values.client} clients, ${EVENTS} events, ${TENANTS} tenants × 3 warm WebAssembly hooks, db ${values.db}, workers ${
    values.workers ?? "default"
  }${HOSTILE_CLIENTS > 0 ? `, the hostile tenant on ${HOSTILE_CLIENTS} clients of its own` : ""}`,
);
const calm = await run(await database(), null);
if (values["calm-only"]) {
  if (PROCESS_COUNTS.length > 1) {
    const table: [number, RunFigures][] = [[processes, calm]];
    for (const n of PROCESS_COUNTS.slice(1)) {
      processes = n;
      console.log(`\n--- serve --processes ${n}`);
      table.push([n, await run(await database(), null)]);
    }
    const base = calm.answers / calm.seconds;
    console.log("\nprocesses  answers/s  ratio  audit");
    for (const [n, f] of table) {
      const rate = f.answers / f.seconds;
      const lost = f.answers - f.audited;
      console.log(
        `${String(n).padStart(9)}  ${rate.toFixed(0).padStart(9)}  ${(rate / base).toFixed(2)}×  ${
          lost <= 0 ? "none missing" : `${lost} MISSING`
        }`,
      );
    }
  }
  Deno.exit(0);
}
const others = Object.keys(calm.p99).filter((name) => name.startsWith("tenant-"));
const rows: [string, number, RunFigures][] = [];
for (const name of CLASSES) {
  console.log(`\n--- hostile tenant: ${name}`);
  const stormy = await run(await database(), HOSTILE[name]!);
  const ratio = Math.max(...others.map((n) => stormy.p99[n]! / calm.p99[n]!));
  rows.push([name, ratio, stormy]);
}
console.log("\nworst other-tenant p99, with / without the hostile tenant:");
for (const [name, ratio, f] of rows) {
  const worst = Math.max(...others.map((n) => f.p99[n]!));
  console.log(`  ${name.padEnd(8)} ${ratio.toFixed(2)}× (${worst.toFixed(1)} ms)`);
}
const audits: [string, RunFigures][] = [
  ["without", calm],
  ...rows.map(([n, , f]) => [n, f] as [string, RunFigures]),
];
for (const [label, f] of audits) {
  const lost = f.answers - f.audited;
  console.log(
    `audit ${label}: ${f.audited} rows for ${f.answers} answers (${
      lost <= 0 ? "none missing" : `${lost} MISSING`
    })`,
  );
}
Deno.exit(0);
