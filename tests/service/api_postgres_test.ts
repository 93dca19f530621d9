import assert from "node:assert/strict";
import postgres from "postgres";
import { openPostgresStore } from "../../packages/store-postgres/postgres.ts";
import { freshDatabase } from "../_pg.ts";
import { type Harness, harness, toolEvent } from "./_api.ts";
import { apiSuite } from "./_api_suite.ts";

apiSuite("postgres", async () => openPostgresStore(await freshDatabase()));

/** Runs `statement` on the cluster's `postgres` database. */
async function asAdmin(url: string, statement: string): Promise<void> {
  const base = new URL(url);
  base.pathname = "/postgres";
  const admin = postgres(base.toString(), { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(statement);
  } finally {
    await admin.end();
  }
}

/** Runs `fn` on a service over a fresh database, named for the statements `fn` runs on it. */
async function onFreshDatabase(fn: (h: Harness, url: string, name: string) => Promise<void>) {
  const url = await freshDatabase();
  const h = await harness(openPostgresStore(url));
  try {
    await fn(h, url, new URL(url).pathname.slice(1));
  } finally {
    await h.close();
  }
}

Deno.test("postgres: lost connections answer 503 STORE_UNAVAILABLE, never 500, and the service recovers", async () => {
  await onFreshDatabase(async (h, url, name) => {
    const key = await h.tenant("acme");
    const event = { key, body: toolEvent("ls") };
    assert.equal((await h.call("POST", "/v1/events", event)).status, 200);
    // What a database restart or failover does to the service's connections.
    await asAdmin(
      url,
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}'`,
    );
    const statuses: string[] = [];
    for (let i = 0; i < 20 && statuses.at(-1) !== "200"; i++) {
      const answer = await h.call("POST", "/v1/events", event);
      statuses.push(answer.status === 200 ? "200" : `${answer.status} ${answer.body.error.code}`);
      if (answer.status === 503) assert.equal(answer.headers.get("retry-after"), "1");
    }
    assert.equal(statuses.at(-1), "200", statuses.join(", "));
    assert.ok(statuses.every((s) => s === "200" || s === "503 STORE_UNAVAILABLE"), statuses.join());
  });
});

Deno.test("postgres: a database that is gone answers 503 STORE_UNAVAILABLE on every route that needs it", async () => {
  await onFreshDatabase(async (h, url, name) => {
    const key = await h.tenant("acme");
    await asAdmin(url, `DROP DATABASE ${name} WITH (FORCE)`);
    for (
      const [method, path, options] of [
        ["POST", "/v1/events", { key, body: toolEvent("ls") }],
        ["GET", "/v1/hooks", { key }],
        ["GET", "/v1/tenants", {}],
        ["GET", "/healthz", { key: null }],
      ] as const
    ) {
      const answer = await h.call(method, path, options);
      assert.deepEqual(
        [answer.status, answer.body.error?.code],
        [503, "STORE_UNAVAILABLE"],
        `${method} ${path}`,
      );
    }
  });
});

Deno.test("postgres: audit reads have connections of their own, so a flood of them takes two at most", async () => {
  await onFreshDatabase(async (h, url, name) => {
    const key = await h.tenant("acme");
    for (let i = 0; i < 20; i++) {
      await h.call("POST", "/v1/events", { key, body: toolEvent(`ls ${i}`) });
    }
    let most = 0;
    const watch = postgres(url, { max: 1, onnotice: () => {} });
    let reading = true;
    const watcher = (async () => {
      while (reading) {
        const [r] = await watch`SELECT COUNT(*) AS n FROM pg_stat_activity
          WHERE datname = ${name} AND application_name = 'hookbox-audit-reads'`;
        most = Math.max(most, Number(r!.n));
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    const reads = Array.from(
      { length: 32 },
      () => h.call("GET", "/v1/audit?hook=guard&outcome=block", { key }),
    );
    const events = Array.from(
      { length: 10 },
      (_, i) => h.call("POST", "/v1/events", { key, body: toolEvent(`echo ${i}`) }),
    );
    const answers = await Promise.all([...reads, ...events]);
    reading = false;
    await watcher;
    await watch.end();
    assert.ok(answers.every((a) => a.status === 200));
    assert.ok(most >= 1 && most <= 2, `audit read connections seen: ${most}`);
  });
});
