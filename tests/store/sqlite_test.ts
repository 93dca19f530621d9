import assert from "node:assert/strict";
import { openSqliteStore } from "../../src/store/sqlite.ts";
import { storeSuite } from "./_suite.ts";

storeSuite("sqlite", async () => {
  const dir = await Deno.makeTempDir({ prefix: "hookbox-sqlite-" });
  return openSqliteStore(`${dir}/hookbox.db`);
});

Deno.test("sqlite store: remembered keys and hook generation follow writes from this and other connections", async () => {
  const dir = await Deno.makeTempDir({ prefix: "hookbox-sqlite-" });
  const a = openSqliteStore(`${dir}/hookbox.db`);
  const b = openSqliteStore(`${dir}/hookbox.db`);
  try {
    await a.migrate();
    await a.createTenant({ id: "t", policy: {}, created_at: "x" });
    await a.createKey({ id: "k1", tenant_id: "t", name: null, hash: "h1", created_at: "x" });
    assert.equal((await a.tenantForKey("h1"))?.id, "t");
    assert.equal(await a.tenantForKey("h2"), null);
    const g0 = await a.hooksGeneration();

    // Another connection's writes (another `hookbox serve` on the same file).
    await b.setPolicy("t", { events_per_minute: 7 });
    assert.deepEqual((await a.tenantForKey("h1"))?.policy, { events_per_minute: 7 });
    await b.createKey({ id: "k2", tenant_id: "t", name: null, hash: "h2", created_at: "x" });
    assert.equal((await a.tenantForKey("h2"))?.id, "t", "a key unknown a moment ago");
    await b.revokeKey("t", "k1");
    assert.equal(await a.tenantForKey("h1"), null, "revoked elsewhere");
    await b.addHookVersion("t", "guard", {
      sha256: "s1",
      runtime: "wasm",
      size_bytes: 1,
      manifest: { name: "guard", description: "d", trigger: "pre-tool-call" } as never,
      body: "",
      built_from: "wasm",
      sources: {},
      created_at: "x",
    });
    const g1 = await a.hooksGeneration();
    assert.ok(g1 > g0, "a hook uploaded elsewhere moves the generation");

    // This connection's own writes, including one that lands while a read is under way.
    await a.setEnabled("t", "guard", false);
    assert.ok((await a.hooksGeneration()) > g1);
    const reading = a.tenantForKey("h2");
    await a.revokeKey("t", "k2");
    assert.equal((await reading)?.id, "t", "the read began before the revocation");
    assert.equal(await a.tenantForKey("h2"), null, "and is not remembered past it");

    // Answers are shared between requests: nobody can change them for the next one.
    await a.createKey({ id: "k3", tenant_id: "t", name: null, hash: "h3", created_at: "x" });
    const row = await a.tenantForKey("h3");
    assert.throws(() => {
      (row!.policy as Record<string, unknown>).events_per_minute = 1e9;
    }, TypeError);
    assert.deepEqual((await a.tenantForKey("h3"))?.policy, { events_per_minute: 7 });
  } finally {
    await a.close();
    await b.close();
  }
});
