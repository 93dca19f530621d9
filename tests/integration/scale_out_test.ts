/**
 * Scale-out as an operator runs it (docs/deploy.md): three `hookbox serve`
 * processes on one PostgreSQL behind HAProxy from Debian. Checked through the
 * load balancer: every change made through one instance is served by all,
 * a per-minute quota holds over the three as over one, and under bounded
 * load an instance killed with `kill -9` and a PostgreSQL restart cost no
 * `500` and leave every answered decision audited exactly once.
 */
import assert from "node:assert/strict";
import { call, type ServeProcess, startServe } from "../../scripts/_serve_process.ts";
import { ownCluster } from "../_pg.ts";
import { wasmFolder } from "../service/_api.ts";
import { earlyInMinute, tempDir } from "../_helpers.ts";

const ADMIN = "scale-out-admin-key-0123456789";

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** HAProxy in the foreground, round robin over `servers`, health-checked on /healthz. */
async function haproxy(servers: ServeProcess[]) {
  const dir = await tempDir("hookbox-haproxy-");
  const port = freePort();
  // The shipped configuration (deploy/haproxy.cfg), with this run's ports: the topology the
  // docs describe is the one tested.
  const shipped = await Deno.readTextFile(new URL("../../deploy/haproxy.cfg", import.meta.url));
  const lines = shipped.split("\n")
    .filter((line) => !/^\s*server s\d/.test(line))
    .map((line) => line.replace(/^(\s*bind )127\.0\.0\.1:8787$/, `$1127.0.0.1:${port}`));
  const at = lines.findIndex((line) => line.trim() === "http-check expect status 200") + 1;
  lines.splice(
    at,
    0,
    ...servers.map((s, i) =>
      `  server s${i} ${new URL(s.url).host} check inter 500ms fall 2 rise 1`
    ),
  );
  if (!lines.some((line) => line.includes(`127.0.0.1:${port}`)) || at === 0) {
    throw new Error(
      "deploy/haproxy.cfg no longer has the bind line or health check this test sets",
    );
  }
  await Deno.writeTextFile(`${dir}/haproxy.cfg`, lines.join("\n"));
  const child = new Deno.Command("haproxy", {
    args: ["-db", "-f", `${dir}/haproxy.cfg`],
    stdout: "null",
    stderr: "null",
  }).spawn();
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    const up = await fetch(`${url}/healthz`).then(
      (r) => r.body?.cancel().then(() => r.ok),
      () => false,
    );
    if (up) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url,
    async stop() {
      child.kill("SIGTERM");
      await child.status;
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** Sends `total` events over `clients` connections; runs `during` once `at` answers are in. */
async function load(
  url: string,
  key: string,
  total: number,
  at: number,
  during: () => Promise<void>,
): Promise<{ statuses: number[]; decisions: string[] }> {
  const statuses: number[] = [];
  const decisions: string[] = [];
  let sent = 0;
  let fired: Promise<void> | null = null;
  const client = async () => {
    while (sent < total) {
      const i = sent++;
      const res = await fetch(`${url}/v1/events`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}` },
        body: JSON.stringify({
          event_type: "pre-tool-call",
          session_id: `load-${i}`,
          tool_name: "Bash",
          tool_input: { command: i % 2 ? "rm -rf /" : "ls" },
        }),
      }).catch(() => null);
      // An answer is its body too: an instance killed between its headers and its body (the
      // balancer had relayed the headers) answered nothing, as a dropped connection.
      const decision = res?.status === 200
        ? await res.json().then((b) => b.decision_id as string, () => null)
        : (await res?.body?.cancel(), null);
      statuses.push(res === null || (res.status === 200 && decision === null) ? 0 : res.status);
      if (decision !== null) decisions.push(decision);
      // As a client should: a 503 says when to come back (without it, how many of the events
      // land while the store is down would be a race against the restart).
      if (res?.status === 503) {
        const seconds = Number(res.headers.get("retry-after") ?? "1");
        await new Promise((resolve) => setTimeout(resolve, Math.min(seconds, 5) * 1000));
      }
      // Once, by whichever client first sees the count reached (several may see it at once).
      if (statuses.length >= at && fired === null) fired = during();
    }
  };
  await Promise.all(Array.from({ length: 4 }, client));
  await fired;
  return { statuses, decisions };
}

/** Every audit row of the tenant (through the balancer), by decision id. */
async function auditCounts(url: string, key: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  let cursor: string | null = "";
  while (cursor !== null) {
    const page = await call(
      url,
      "GET",
      `/v1/audit?limit=1000${cursor ? `&cursor=${cursor}` : ""}`,
      key,
    );
    assert.equal(page.status, 200);
    for (const item of page.body.items) {
      counts.set(item.decision_id, (counts.get(item.decision_id) ?? 0) + 1);
    }
    cursor = page.body.next_cursor;
  }
  return counts;
}

Deno.test("three instances on one PostgreSQL behind HAProxy act as one, through kill -9 and a restart", async () => {
  const cluster = await ownCluster();
  const servers: ServeProcess[] = [];
  let lb: Awaited<ReturnType<typeof haproxy>> | null = null;
  try {
    for (let i = 0; i < 3; i++) {
      servers.push(
        await startServe({ db: cluster.url, adminKey: ADMIN, args: ["--workers", "1"] }),
      );
    }
    lb = await haproxy(servers);
    const url = lb.url;
    // Propagation: a tenant, a key and a hook made through one instance, used through all.
    assert.equal((await call(url, "POST", "/v1/tenants", ADMIN, { id: "acme" })).status, 201);
    const key = (await call(url, "POST", "/v1/tenants/acme/keys", ADMIN, {})).body.key as string;
    const up = await call(
      url,
      "PUT",
      "/v1/hooks/guard",
      key,
      await wasmFolder("guard", "guard_wasi"),
    );
    assert.equal(up.status, 201, JSON.stringify(up.body));
    for (let i = 0; i < 6; i++) {
      const answer = await call(url, "POST", "/v1/events", key, {
        event_type: "pre-tool-call",
        session_id: "p",
        tool_name: "Bash",
        tool_input: { command: "rm -rf /" },
      });
      assert.deepEqual([answer.status, answer.body.decision], [200, "block"], `request ${i}`);
    }
    const disabled = await call(url, "PATCH", "/v1/hooks/guard", key, { enabled: false });
    assert.equal(disabled.status, 200);
    for (let i = 0; i < 6; i++) {
      const answer = await call(url, "POST", "/v1/events", key, {
        event_type: "pre-tool-call",
        session_id: "p",
        tool_name: "Bash",
        tool_input: { command: "rm -rf /" },
      });
      assert.equal(answer.body.decision, "allow", `the change is seen by every instance (${i})`);
    }
    await call(url, "PATCH", "/v1/hooks/guard", key, { enabled: true });

    // A per-minute quota over three instances admits what one would. Started early in a minute,
    // so that the burst stays inside one (the quota counts per calendar minute).
    await earlyInMinute();
    assert.equal(
      (await call(url, "POST", "/v1/tenants", ADMIN, {
        id: "quota",
        policy: { events_per_minute: 30 },
      })).status,
      201,
    );
    const quotaKey = (await call(url, "POST", "/v1/tenants/quota/keys", ADMIN, {})).body
      .key as string;
    const burst = await Promise.all(
      Array.from({ length: 45 }, (_, i) =>
        call(url, "POST", "/v1/events", quotaKey, {
          event_type: "pre-tool-call",
          session_id: `q${i}`,
          tool_name: "Bash",
          tool_input: { command: "ls" },
        })),
    );
    assert.equal(burst.filter((r) => r.status === 200).length, 30);
    assert.equal(burst.filter((r) => r.status === 429).length, 15);

    // kill -9 of an instance under load: the balancer moves on; no 500; every answer audited once.
    const killed = await load(url, key, 240, 60, () => servers[1]!.kill());
    // A PostgreSQL restart under load: 503 (with Retry-After) while it is down, never 500.
    const restarted = await load(url, key, 240, 60, () => cluster.restart());
    for (const [name, run] of [["kill -9", killed], ["restart", restarted]] as const) {
      assert.ok(!run.statuses.includes(500), `${name}: no 500 (${run.statuses.join(",")})`);
      // 0: the connection dropped (a request in flight on the killed instance, which the
      // balancer cannot replay) — never answered, so never an unaudited answer.
      assert.ok(
        run.statuses.every((s) => s === 200 || s === 503 || s === 502 || s === 0),
        `${name}: only answers, 503, the balancer's 502 or a dropped connection (${[
          ...new Set(run.statuses),
        ]})`,
      );
      assert.ok(run.statuses.filter((s) => s === 0).length <= 8, `${name}: few dropped`);
      assert.ok(run.decisions.length >= 120, `${name}: most events answered`);
    }
    const counts = await auditCounts(url, key);
    for (const id of [...killed.decisions, ...restarted.decisions]) {
      assert.equal(counts.get(id), 1, `decision ${id} audited exactly once`);
    }
  } finally {
    await lb?.stop();
    for (const s of servers) await s.stop().catch(() => {});
    cluster.stopSync();
  }
});
