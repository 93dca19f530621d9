/**
 * What one tenant's requests (not its hooks) can hold every tenant's events
 * for. Starts `hookbox serve` as a separate process; a victim tenant sends one
 * event at a time while a hostile tenant, in turn:
 *
 * - uploads 30 JS hooks at once (each a compile: at most two run, the rest
 *   wait or get 429);
 * - uploads gzip bombs (a 1 MiB gzip of 1 GiB of zeros), 3 at once;
 * - uploads hook folders of 60 MiB (a 60 KB gzip'd tar each, every one
 *   different), 2 at once: each is stored, hashed and written for the build;
 * - sends 80 KB events as one-byte chunks, 2 at once;
 * - sends events that its hook blocks with a reason of a million characters,
 *   8 at once (each answer and audit row carries the reason);
 * - sends a hundred events whose answers carry a 1 MB reason and never reads
 *   them, and two hundred 1 MB events of which it sends 900 KB and waits;
 * - sends events of a megabyte of small keys (70,000 in `tool_input`, under
 *   the default `input_kb`), 4 at once, to one small WebAssembly hook; the
 *   same as Claude Code's payloads (`/v1/agents/claude-code/events`); the
 *   same to a JS hook that rewrites each command, re-checked by the first;
 *   events of a 1 MB command its hook's matcher pattern (one RE2's DFA
 *   cannot run) steps through, 4 at once; the first events to 200 hooks
 *   whose patterns each take ~3 ms to compile; and the same megabyte of
 *   small keys from a tenant past its `events_per_minute` (10);
 * - lists its 500 hooks, each with a manifest of 16 KiB, 4 at once;
 * - reads audit pages of up to a thousand rows of ~190 KB each (rows of events
 *   that ran a thousand hooks, ingested through the admin route);
 * - reads its audit with filters that match nothing, over 100,000 rows of its
 *   own (ingested through the admin route), 20 reads at once;
 *
 * and, side by side in the same run, with the hostile tenant idle. Prints the
 * victim's p50 / p99 / max per phase and the ratio of its max to the idle
 * phase's. The victim runs on a thread of its own (`_stalls_victim.ts`), so
 * building, sending and reading the hostile requests here never delays it.
 * Loopback only, bounded in count and time.
 *
 *   deno run -A scripts/bench_stalls.ts [--rows 100000] [--db sqlite|postgres|URL]
 *     [--only TEXT] [--server-flag=--cpu-prof ...]
 *
 * `--only TEXT` runs the idle phase and the phases whose names hold TEXT;
 * each `--server-flag` is passed to the server's `deno run` (profiling).
 *
 * `--db postgres` starts a throwaway PostgreSQL cluster (Debian's package).
 *
 * @module
 */
import { parseArgs } from "node:util";
import wabtInit from "wabt";
import { createTar } from "nanotar";
import { freshDatabase } from "../tests/_pg.ts";
import { RawHttpConnection } from "./_raw_http.ts";
import { call, startServe } from "./_serve_process.ts";
import { percentile } from "./_stats.ts";
import { WARM_UP_PLUGIN_BASE64 } from "../packages/deno/serve/_warm_up_plugin.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rows: { type: "string", default: "100000" },
    db: { type: "string", default: "sqlite" },
    only: { type: "string" },
    "server-flag": { type: "string", multiple: true },
  },
});
const ROWS = Number(values.rows);
const ADMIN = "bench-stalls-admin-key-0123456789";

const db = values.db === "sqlite"
  ? `sqlite:${await Deno.makeTempDir({ prefix: "hookbox-stalls-" })}/hookbox.db`
  : values.db === "postgres"
  ? await freshDatabase()
  : values.db!;
const server = await startServe({
  db,
  adminKey: ADMIN,
  ...(values["server-flag"] ? { denoFlags: values["server-flag"] } : {}),
});
const { url } = server;
const keyOf = async (id: string) => {
  await call(url, "POST", "/v1/tenants", ADMIN, { id });
  return (await call(url, "POST", `/v1/tenants/${id}/keys`, ADMIN, {})).body.key as string;
};
/** Uploads `count` hooks named h0, h1, … for `key`, 8 at once, each with `files(name, i)`. */
async function uploadMany(
  key: string,
  count: number,
  files: (name: string, i: number) => Record<string, unknown>,
): Promise<void> {
  for (let i = 0; i < count; i += 8) {
    await Promise.all(Array.from({ length: Math.min(8, count - i) }, async (_, j) => {
      const name = `h${i + j}`;
      const up = await call(url, "PUT", `/v1/hooks/${name}`, key, { files: files(name, i + j) });
      if (up.status !== 201) throw new Error(JSON.stringify(up.body));
    }));
  }
}
const victim = await keyOf("victim");
const hostile = await keyOf("hostile");
// A third tenant whose hook blocks every event with a reason of a million characters.
const loud = await keyOf("loud");
{
  const wabt = await wabtInit();
  const source = await Deno.readTextFile(
    new URL("../tests/corpus/huge_reason.wat", import.meta.url),
  );
  const mod = wabt.parseWat("huge_reason.wat", source);
  const bytes = mod.toBinary({}).buffer as Uint8Array;
  mod.destroy();
  const files = {
    "HOOK.md": "---\nname: loud\ndescription: d\ntrigger: pre-tool-call\nisolation: warm\n---\n",
    "plugin.wasm": { base64: btoa(String.fromCharCode(...bytes)) },
  };
  const up = await call(url, "PUT", "/v1/hooks/loud", loud, { files });
  if (up.status !== 201) throw new Error(JSON.stringify(up.body));
}
// A tenant with one small WebAssembly hook, sent events of a megabyte of small keys.
const bulky = await keyOf("bulky");
{
  const files = {
    "HOOK.md": "---\nname: small\ndescription: d\ntrigger: pre-tool-call\n---\n",
    "plugin.wasm": { base64: WARM_UP_PLUGIN_BASE64 },
  };
  const up = await call(url, "PUT", "/v1/hooks/small", bulky, { files });
  if (up.status !== 201) throw new Error(JSON.stringify(up.body));
}
// One whose JS hook rewrites the command of every event its guard (the small hook) then re-checks.
const rewriting = await keyOf("rewriting");
{
  const guard = await call(url, "PUT", "/v1/hooks/small", rewriting, {
    files: {
      "HOOK.md": "---\nname: small\ndescription: d\ntrigger: pre-tool-call\npriority: 900\n---\n",
      "plugin.wasm": { base64: WARM_UP_PLUGIN_BASE64 },
    },
  });
  if (guard.status !== 201) throw new Error(JSON.stringify(guard.body));
  const rewriter = await call(url, "PUT", "/v1/hooks/rewrite", rewriting, {
    files: {
      "HOOK.md": "---\nname: rewrite\ndescription: d\ntrigger: pre-tool-call\npriority: 1\n---\n",
      "scripts/run.mjs": `export default () => ({ modified_input: { command: "ls -l" } });\n`,
    },
  });
  if (rewriter.status !== 201) throw new Error(JSON.stringify(rewriter.body));
}
// One whose hook asks, by a pattern RE2's DFA cannot run, for events its NFA then
// steps through character by character (the per-event matcher budget ends it).
const matching = await keyOf("matching");
{
  const up = await call(url, "PUT", "/v1/hooks/picky", matching, {
    files: {
      "HOOK.md": "---\nname: picky\ndescription: d\ntrigger: pre-tool-call\n" +
        "matcher:\n  pattern: '\\pL{0,500}a[ab]{25}[^ab]'\n---\n",
      "plugin.wasm": { base64: WARM_UP_PLUGIN_BASE64 },
    },
  });
  if (up.status !== 201) throw new Error(JSON.stringify(up.body));
}
// One with 200 hooks whose patterns each take ~3 ms to compile, none compiled yet.
const compiling = await keyOf("compiling");
await uploadMany(compiling, 200, (name, i) => ({
  "HOOK.md": `---\nname: ${name}\ndescription: d\ntrigger: pre-tool-call\n` +
    `matcher:\n  pattern: '\\p{Greek}{0,${800 + i}}x'\n---\n`,
  "plugin.wasm": { base64: WARM_UP_PLUGIN_BASE64 },
}));
// And one whose events_per_minute is 10.
const capped = await keyOf("capped");
{
  const policy = await call(url, "PUT", "/v1/tenants/capped/policy", ADMIN, {
    events_per_minute: 10,
  });
  if (policy.status !== 200) throw new Error(JSON.stringify(policy.body));
}
const event = {
  event_type: "pre-tool-call",
  session_id: "s",
  tool_name: "Bash",
  tool_input: { command: "ls" },
};

/**
 * `count` events of a megabyte of small keys on each of 4 connections of
 * tenant `key` (a connection the server closed is opened again); how many
 * got each status.
 */
async function bigEvents(
  key: string,
  count: number,
  route = "/v1/events",
  command?: string,
): Promise<Record<number, number>> {
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  const keys = Object.fromEntries(Array.from({ length: 70_000 }, (_, i) => [`k${i}`, i]));
  const tool_input = command === undefined ? { command: "ls", ...keys } : { command };
  const body = JSON.stringify(
    route === "/v1/events"
      ? { ...event, tool_input }
      : { session_id: "s", hook_event_name: "PreToolUse", tool_name: "Bash", tool_input },
  );
  const by: Record<number, number> = {};
  await Promise.all(Array.from({ length: 4 }, async () => {
    let conn = await RawHttpConnection.open(url);
    for (let i = 0, failed = 0; i < count;) {
      const answer = await conn.request("POST", route, headers, body).catch(() => null);
      if (answer === null) {
        if (++failed > 3) throw new Error("the server keeps closing the connection");
        conn.close();
        conn = await RawHttpConnection.open(url);
        continue;
      }
      failed = 0;
      i++;
      by[answer.status] = (by[answer.status] ?? 0) + 1;
    }
    conn.close();
  }));
  return by;
}

// The victim runs on a thread of its own (scripts/_stalls_victim.ts) for the whole run.
const victimThread = new Worker(new URL("./_stalls_victim.ts", import.meta.url), {
  type: "module",
});
/** The victim thread's next answer. */
const fromVictim = () =>
  new Promise<unknown>((resolve) =>
    victimThread.addEventListener("message", (m) => resolve(m.data), { once: true })
  );
{
  const ready = fromVictim();
  victimThread.postMessage({ url, key: victim, body: JSON.stringify(event) });
  await ready;
}

/** The victim's latencies while `attack` runs (or for `ms` when it is null). */
async function victimDuring(attack: (() => Promise<unknown>) | null, ms = 3000) {
  const now = () => performance.timeOrigin + performance.now();
  const from = now();
  if (attack) await attack();
  else await new Promise((resolve) => setTimeout(resolve, ms));
  const answer = fromVictim();
  victimThread.postMessage({ from, to: now() });
  const got = await answer;
  if (typeof got === "string") throw new Error(got);
  return (got as number[]).sort((a, b) => a - b);
}

// Warm the victim's path and fill the hostile tenant's audit (admin ingest, 1,000 per call).
await victimDuring(null, 1000);
const row = (i: number) => ({
  decision_id: `ingested-${i}`,
  tenant_id: "hostile",
  at: new Date(Date.UTC(2026, 10, 1) + i * 1000).toISOString(),
  session_id: `s${i % 100}`,
  event_type: "pre-tool-call",
  decision: "allow",
  reason: null,
  blocked_by: null,
  dry_run: false,
  hooks: [{
    name: "guard",
    level: "tenant",
    version: 1,
    sha256: "a".repeat(64),
    outcome: "allow",
    detail: null,
    duration_ms: 0.1,
    fuel: 1000,
  }],
});
for (let i = 0; i < ROWS; i += 1000) {
  const items = Array.from({ length: Math.min(1000, ROWS - i) }, (_, j) => row(i + j));
  const answer = await call(url, "POST", "/v1/audit/ingest", ADMIN, { items });
  if (answer.status !== 200) throw new Error(JSON.stringify(answer.body));
}

// A tenant with 500 prompt hooks whose manifests are 16 KiB each (the frontmatter's cap).
const lister = await keyOf("lister");
await uploadMany(lister, 500, (name) => ({
  "HOOK.md": `---\nname: ${name}\ndescription: ${"d".repeat(16_200)}\n` +
    `trigger: pre-agent-turn\ninject: {}\n---\nhello\n`,
}));

// A tenant whose rows look like those of events that ran a thousand hooks (~190 KB each).
const wide = await keyOf("wide");
{
  const hooks = Array.from({ length: 1000 }, (_, i) => ({
    name: `hook-${i}`,
    level: "tenant",
    version: 1,
    sha256: "ab".repeat(32),
    outcome: "ok",
    detail: null,
    duration_ms: 0.123,
    fuel: 5078,
  }));
  for (let i = 0; i < 1000; i += 40) {
    const items = Array.from({ length: 40 }, (_, j) => ({
      ...row(i + j),
      decision_id: `wide-${i + j}`,
      tenant_id: "wide",
      hooks,
    }));
    const answer = await call(url, "POST", "/v1/audit/ingest", ADMIN, { items });
    if (answer.status !== 200) throw new Error(JSON.stringify(answer.body));
  }
}

const js = (i: number) => ({
  files: {
    "HOOK.md": `---\nname: h${i}\ndescription: d\ntrigger: pre-tool-call\n---\n`,
    "scripts/run.js":
      `const fs = require("fs");\nconst e = JSON.parse(fs.readFileSync(0, "utf8"));\n` +
      `if (e.tool_input.command === "${i}") process.exit(2);\n`,
  },
});
// A gzip of a gibibyte of zeros (about 1 MiB): inflated past the 64 MiB cap, it must be cut off.
const bomb = await new Response(
  new Blob([new Uint8Array(1024 * 1024 * 1024)]).stream().pipeThrough(
    new CompressionStream("gzip"),
  ),
).bytes();
/** Three hook folders of 12 MiB of base64 each, as JSON (made here, not while the victim runs). */
const bulkBodies = [0, 1, 2].map((i) =>
  JSON.stringify({
    files: {
      "HOOK.md": `---\nname: bulk${i}\ndescription: d\ntrigger: pre-tool-call\n---\n`,
      "plugin.wasm": { base64: WARM_UP_PLUGIN_BASE64 },
      "docs/bulk.bin": { base64: "QUJD".repeat(3 * 1024 * 1024) },
    },
  })
);
/** Six hook folders of 60 MiB of text, each different, as gzip'd tars of about 60 KB. */
const hoarder = await keyOf("hoarder");
const hoards = await Promise.all(Array.from({ length: 6 }, (_, i) => {
  const big = new Uint8Array(60 * 1024 * 1024).fill(0x61 + i);
  return new Response(
    new Blob([
      createTar([
        {
          name: "HOOK.md",
          data: "---\nname: hoard\ndescription: d\ntrigger: pre-tool-call\n---\n",
        },
        {
          name: "plugin.wasm",
          data: Uint8Array.from(atob(WARM_UP_PLUGIN_BASE64), (c) => c.charCodeAt(0)),
        },
        { name: "docs/big.txt", data: big },
      ]) as Uint8Array<ArrayBuffer>,
    ]).stream().pipeThrough(new CompressionStream("gzip")),
  ).bytes();
}));
/** A hook folder of 60,000 one-line files, as a gzip'd tar and as JSON: refused where it is read. */
const manyFiles = [
  { name: "HOOK.md", data: "---\nname: many\ndescription: d\ntrigger: pre-tool-call\n---\n" },
  ...Array.from({ length: 60_000 }, (_, i) => ({ name: `scripts/f${i}.txt`, data: `${i}` })),
];
const manyTar = await new Response(
  new Blob([createTar(manyFiles) as Uint8Array<ArrayBuffer>]).stream().pipeThrough(
    new CompressionStream("gzip"),
  ),
).bytes();
const manyJson = JSON.stringify({
  files: Object.fromEntries(manyFiles.map((f) => [f.name, f.data])),
});
/** An 80 KB event sent as one-byte chunks (chunked encoding) on its own connection. */
async function trickle(): Promise<string> {
  const { hostname, port } = new URL(url);
  const conn = await Deno.connect({ hostname, port: Number(port) });
  const text = JSON.stringify({ ...event, tool_input: { command: "ls", pad: "x".repeat(80_000) } });
  await conn.write(new TextEncoder().encode(
    `POST /v1/events HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${hostile}\r\n` +
      `transfer-encoding: chunked\r\n\r\n`,
  ));
  for (let i = 0; i < text.length; i++) {
    const ok = await conn.write(new TextEncoder().encode(`1\r\n${text[i]}\r\n`)).then(
      () => true,
      () => false,
    );
    if (!ok) break;
    if (i % 256 === 0) await new Promise((resolve) => setTimeout(resolve, 0));
  }
  const buffer = new Uint8Array(256);
  const n = await conn.read(buffer).catch(() => null);
  conn.close();
  return new TextDecoder().decode(buffer.subarray(0, n ?? 0)).split("\r\n")[0]!;
}

/**
 * `count` raw connections of `key`'s, each sending `head` and then `body`
 * (not awaited: a body the server stops reading stays in the kernel), held
 * `ms`; the status line each got by then (a few bytes read, no more), and how
 * much the server grew meanwhile.
 */
async function heldConnections(
  count: number,
  head: string,
  body: Uint8Array | null,
  ms: number,
): Promise<string> {
  const { hostname, port } = new URL(url);
  const before = server.rss();
  const conns: Deno.TcpConn[] = [];
  const statuses: Record<string, number> = {};
  const seen: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const conn = await Deno.connect({ hostname, port: Number(port) });
    conns.push(conn);
    await conn.write(new TextEncoder().encode(head));
    if (body !== null) conn.write(body).catch(() => {});
    const line = new Uint8Array(16);
    seen.push(
      conn.read(line).then((n) => {
        const status = n ? new TextDecoder().decode(line.subarray(0, n)).split(" ")[1]! : "closed";
        statuses[status] = (statuses[status] ?? 0) + 1;
      }, () => {}),
    );
  }
  await new Promise((resolve) => setTimeout(resolve, ms));
  const grew = server.rss() - before;
  for (const conn of conns) conn.close();
  await Promise.all(seen);
  // Resident memory counts garbage not yet collected too: a second round can find less.
  return `answered ${JSON.stringify(statuses)}, server RSS +${(grew / 2 ** 20).toFixed(0)} MiB`;
}

const phases: [string, (() => Promise<unknown>) | null][] = [
  ["hostile tenant idle", null],
  ["30 JS uploads at once", async () => {
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => call(url, "PUT", `/v1/hooks/h${i}`, hostile, js(i))),
    );
    const by: Record<number, number> = {};
    for (const a of answers) by[a.status] = (by[a.status] ?? 0) + 1;
    console.log(`  uploads answered: ${JSON.stringify(by)}`);
  }],
  ["JSON uploads of 12 MiB of base64, 3 at once, 3 times", async () => {
    // Parsed, checked and decoded before anything else looks at them, then stored.
    const by: Record<number, number> = {};
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(bulkBodies.map(async (body, i) => {
        const res = await fetch(`${url}/v1/hooks/bulk${i}`, {
          method: "PUT",
          headers: { authorization: `Bearer ${hostile}`, "content-type": "application/json" },
          body,
        });
        await res.body?.cancel();
        return res.status;
      }));
      for (const status of answers) by[status] = (by[status] ?? 0) + 1;
    }
    console.log(`  uploads answered: ${JSON.stringify(by)}`);
  }],
  ["uploads whose HOOK.md is a 16 KiB YAML list, 4 at once, 5 times", async () => {
    // Refused for its unknown key, after 25-50 ms of a thread's parsing each.
    const body = {
      files: {
        "HOOK.md": `---\nname: deep\ndescription: d\ntrigger: pre-tool-call\nx: [${
          "1,".repeat(7_900)
        }1]\n---\n`,
        "plugin.wasm": { base64: WARM_UP_PLUGIN_BASE64 },
      },
    };
    const by: Record<number, number> = {};
    for (let round = 0; round < 5; round++) {
      const answers = await Promise.all(
        Array.from({ length: 4 }, () => call(url, "PUT", "/v1/hooks/deep", hostile, body)),
      );
      for (const a of answers) by[a.status] = (by[a.status] ?? 0) + 1;
    }
    console.log(`  uploads answered: ${JSON.stringify(by)}`);
  }],
  ["gzip bombs (1 MiB to 1 GiB) uploaded, 3 at once, 4 times", async () => {
    for (let round = 0; round < 4; round++) {
      const answers = await Promise.all(Array.from({ length: 3 }, async () => {
        const res = await fetch(`${url}/v1/hooks/bomb`, {
          method: "PUT",
          headers: { authorization: `Bearer ${hostile}`, "content-type": "application/gzip" },
          body: bomb,
        });
        await res.body?.cancel();
        return res.status;
      }));
      if (answers.some((s) => s !== 413)) throw new Error(`bombs answered ${answers}`);
    }
  }],
  ["uploads of 60 MiB folders (60 KB gzip'd tars), 2 at once, 3 times", async () => {
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(
        hoards.slice(round * 2, round * 2 + 2).map(async (body) => {
          const res = await fetch(`${url}/v1/hooks/hoard`, {
            method: "PUT",
            headers: { authorization: `Bearer ${hoarder}`, "content-type": "application/gzip" },
            body,
          });
          await res.body?.cancel();
          return res.status;
        }),
      );
      if (answers.some((s) => s !== 201)) throw new Error(`60 MiB uploads answered ${answers}`);
    }
  }],
  ["uploads of 60,000 files (tar and JSON), 2 of each at once", async () => {
    const answers = await Promise.all([manyTar, manyTar, manyJson, manyJson].map(async (body) => {
      const res = await fetch(`${url}/v1/hooks/many`, {
        method: "PUT",
        headers: {
          authorization: `Bearer ${hostile}`,
          "content-type": typeof body === "string" ? "application/json" : "application/gzip",
        },
        body,
      });
      await res.body?.cancel();
      return res.status;
    }));
    console.log(`  uploads answered: ${JSON.stringify(answers)}`);
  }],
  ["80 KB events trickled in 1-byte chunks, 2 at once", async () => {
    const lines = await Promise.all([trickle(), trickle()]);
    console.log(`  answered: ${JSON.stringify(lines)}`);
  }],
  ["events blocked with a 1 MB reason, 8 at once", async () => {
    const conns = await Promise.all(Array.from({ length: 8 }, () => RawHttpConnection.open(url)));
    const headers = { authorization: `Bearer ${loud}`, "content-type": "application/json" };
    const body = JSON.stringify(event);
    await Promise.all(conns.map(async (conn) => {
      for (let i = 0; i < 25; i++) {
        const answer = await conn.request("POST", "/v1/events", headers, body);
        if (answer.status !== 200) throw new Error(`loud event answered ${answer.status}`);
      }
      conn.close();
    }));
  }],
  ["events blocked with a 1 MB reason, 100 at once, never read", async () => {
    const text = JSON.stringify(event);
    const head = `POST /v1/events HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${loud}\r\n` +
      `content-type: application/json\r\ncontent-length: ${text.length}\r\n\r\n${text}`;
    console.log(`  ${await heldConnections(100, head, null, 3000)}`);
  }],
  ["events of 1 MB sent 900 KB in and left waiting, 200 at once", async () => {
    const head = `POST /v1/events HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${hostile}\r\n` +
      `content-type: application/json\r\ncontent-length: 1000000\r\n\r\n`;
    console.log(`  ${await heldConnections(200, head, new Uint8Array(900_000).fill(0x20), 3000)}`);
  }],
  ["events of a megabyte of small keys, 4 at once", async () => {
    const by = await bigEvents(bulky, 10);
    if (by[200] !== 40) throw new Error(`bulky events answered ${JSON.stringify(by)}`);
  }],
  ["the same as Claude Code's payloads (/v1/agents)", async () => {
    const by = await bigEvents(bulky, 10, "/v1/agents/claude-code/events");
    if (by[200] !== 40) throw new Error(`bulky payloads answered ${JSON.stringify(by)}`);
  }],
  ["the same, rewritten by a hook and re-checked", async () => {
    const by = await bigEvents(rewriting, 10);
    if (by[200] !== 40) throw new Error(`rewritten events answered ${JSON.stringify(by)}`);
  }],
  ["events of 1 MB its hook's matcher steps through, 4 at once", async () => {
    const by = await bigEvents(matching, 10, "/v1/events", "ab".repeat(500_000));
    if (by[200] !== 40) throw new Error(`matched events answered ${JSON.stringify(by)}`);
  }],
  ["first events to 200 hooks whose patterns take ~3 ms each to compile", async () => {
    const conn = await RawHttpConnection.open(url);
    const headers = { authorization: `Bearer ${compiling}`, "content-type": "application/json" };
    for (let i = 0; i < 10; i++) {
      const answer = await conn.request("POST", "/v1/events", headers, JSON.stringify(event));
      if (answer.status !== 200) throw new Error(`compiling events answered ${answer.status}`);
    }
    conn.close();
  }],
  ["the same past the tenant's events_per_minute", async () => {
    console.log(`  answered: ${JSON.stringify(await bigEvents(capped, 25))}`);
  }],
  ["listings of 500 hooks with 16 KiB manifests, 4 at once, 10 times", async () => {
    for (let i = 0; i < 10; i++) {
      await Promise.all(Array.from({ length: 4 }, () => call(url, "GET", "/v1/hooks", lister)));
    }
  }],
  ["audit pages of up to 1,000 rows of ~190 KB, 5 reads", async () => {
    for (let i = 0; i < 5; i++) await call(url, "GET", "/v1/audit?limit=1000", wide);
  }],
  [`filtered audit reads over ${ROWS} rows, one at a time`, async () => {
    const filters = ["hook=nope", "outcome=error", "session_id=nope", "decision=block"];
    for (let i = 0; i < 100; i++) {
      await call(url, "GET", `/v1/audit?${filters[i % filters.length]}`, hostile);
    }
  }],
  [`filtered audit reads over ${ROWS} rows, 20 at once`, async () => {
    const filters = ["hook=nope", "outcome=error", "session_id=nope", "decision=block"];
    for (let round = 0; round < 5; round++) {
      await Promise.all(
        Array.from(
          { length: 20 },
          (_, i) => call(url, "GET", `/v1/audit?${filters[i % filters.length]}`, hostile),
        ),
      );
    }
  }],
];
let idleMax = NaN;
console.log(
  `hookbox stalls: a victim's events while a hostile tenant sends requests (${ROWS} audit rows, db ${values.db})`,
);
for (const [name, attack] of phases) {
  if (attack !== null && values.only !== undefined && !name.includes(values.only)) continue;
  const t0 = performance.now();
  const l = await victimDuring(attack);
  const max = l.at(-1)!;
  if (attack === null) idleMax = max;
  console.log(
    `${name.padEnd(44)} ${((performance.now() - t0) / 1000).toFixed(1)} s, n=${l.length}: p50 ${
      percentile(l, 0.5).toFixed(2)
    } ms  p99 ${percentile(l, 0.99).toFixed(2)} ms  max ${max.toFixed(1)} ms (${
      (max / idleMax).toFixed(1)
    }× idle max)`,
  );
}
{
  const stopped = fromVictim();
  victimThread.postMessage("stop");
  await stopped;
}
await server.stop();
