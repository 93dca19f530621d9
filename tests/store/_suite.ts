/**
 * The one storage test suite both stores pass (SQLite and PostgreSQL).
 */
import assert from "node:assert/strict";
import {
  type AuditQuery,
  BLOB_PART_BYTES,
  MAX_SHADOW_DISAGREEMENTS,
  PLATFORM,
  type Store,
} from "../../packages/store/store.ts";
import type { Manifest } from "../../packages/core/schema/manifest.ts";
import { manifestSchema } from "../../packages/core/schema/manifest.ts";

const manifest: Manifest = manifestSchema().parse({
  name: "guard",
  description: "d",
  trigger: "pre-tool-call",
});

const version = (sha256: string) => ({
  sha256,
  runtime: "wasm" as const,
  size_bytes: 3,
  manifest,
  body: "",
  built_from: "wasm",
  sources: { "HOOK.md": `${sha256}-md`, "plugin.wasm": sha256 },
  created_at: "2026-11-22T00:00:00.000Z",
});

/** Registers the suite for a store made by `open` (a fresh, empty one per test). */
export function storeSuite(kind: string, open: () => Promise<Store>): void {
  const test = (name: string, fn: (store: Store) => Promise<void>) =>
    Deno.test(`${kind} store: ${name}`, async () => {
      const store = await open();
      try {
        await store.migrate();
        await store.migrate(); // idempotent
        await fn(store);
      } finally {
        await store.close();
      }
    });

  test("tenants are created once, listed, re-policied and deleted with their data", async (s) => {
    assert.equal(await s.createTenant({ id: "a", policy: { max_fuel: 5 }, created_at: "t" }), true);
    assert.equal(await s.createTenant({ id: "a", policy: {}, created_at: "t2" }), false);
    await s.createTenant({ id: "b", policy: {}, created_at: "t" });
    assert.deepEqual((await s.listTenants()).map((t) => t.id), ["a", "b"]);
    assert.deepEqual((await s.getTenant("a"))?.policy, { max_fuel: 5 });
    assert.equal(await s.setPolicy("a", { events_per_minute: 3 }), true);
    assert.deepEqual((await s.getTenant("a"))?.policy, { events_per_minute: 3 });
    assert.equal(await s.setPolicy("zz", {}), false);
    await s.createKey({ id: "k1", tenant_id: "a", name: null, hash: "h1", created_at: "t" });
    await s.addHookVersion("a", "guard", version("s1"));
    // More rows than one step of the deletion takes.
    for (let start = 0; start < 2500; start += 500) {
      await s.appendAudit(Array.from({ length: 500 }, (_, j) => auditRow(`d${start + j}`, "a")));
    }
    await s.appendAudit([auditRow("b1", "b")]);
    assert.equal(await s.deleteTenant("a"), true);
    assert.equal(await s.deleteTenant("a"), false);
    assert.equal(await s.getTenant("a"), null);
    assert.equal(await s.findKey("h1"), null, "its keys went with it");
    assert.deepEqual(await s.listHooks("a"), [], "its hooks went with it");
    assert.equal(await s.countAudit("a"), 0, "its audit went with it");
    assert.equal(await s.countAudit("b"), 1, "another tenant's stays");
  });

  test("a key read while its tenant is being deleted does not outlive the deletion", async (s) => {
    await s.createTenant({ id: "a", policy: {}, created_at: "t" });
    await s.createKey({ id: "k1", tenant_id: "a", name: null, hash: "h1", created_at: "t" });
    for (let start = 0; start < 3000; start += 500) {
      await s.appendAudit(Array.from({ length: 500 }, (_, j) => auditRow(`d${start + j}`, "a")));
    }
    const deleting = s.deleteTenant("a");
    // Requests keep arriving while the tenant's audit is deleted step by step.
    const during = [];
    let done = false;
    deleting.finally(() => done = true);
    while (!done) {
      during.push(await s.tenantForKey("h1"));
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    assert.equal(await deleting, true);
    assert.equal(await s.tenantForKey("h1"), null, "the key is gone once the tenant is");
    assert.ok(during.length > 0);
  });

  test("keys are found by hash until revoked, and only by their own tenant", async (s) => {
    await s.createTenant({ id: "a", policy: {}, created_at: "t" });
    await s.createTenant({ id: "b", policy: {}, created_at: "t" });
    await s.createKey({ id: "k1", tenant_id: "a", name: "ci", hash: "h1", created_at: "t" });
    assert.equal((await s.findKey("h1"))?.tenant_id, "a");
    assert.equal(await s.findKey("nope"), null);
    assert.deepEqual(await s.tenantForKey("h1"), await s.getTenant("a"));
    assert.deepEqual(await s.liveKeyHashes("a"), ["h1"]);
    assert.deepEqual(await s.liveKeyHashes("b"), []);
    assert.equal(await s.tenantForKey("nope"), null);
    assert.equal(await s.revokeKey("b", "k1"), false, "another tenant cannot revoke it");
    assert.equal(await s.revokeKey("a", "k1"), true);
    assert.equal(await s.revokeKey("a", "k1"), false);
    assert.equal(await s.findKey("h1"), null);
    assert.equal(await s.tenantForKey("h1"), null);
    assert.deepEqual(await s.liveKeyHashes("a"), [], "a revoked key is not live");
  });

  test("concurrent key and generation reads each get their own answer", async (s) => {
    await s.createTenant({ id: "a", policy: { events_per_minute: 1 }, created_at: "t" });
    await s.createTenant({ id: "b", policy: {}, created_at: "t" });
    await s.createKey({ id: "ka", tenant_id: "a", name: null, hash: "ha", created_at: "t" });
    await s.createKey({ id: "kb", tenant_id: "b", name: null, hash: "hb", created_at: "t" });
    const generation = await s.hooksGeneration();
    const asked = Array.from({ length: 60 }, (_, i) => ["ha", "hb", "hx", "#generation"][i % 4]!);
    const answers = await Promise.all(
      asked.map((k) => k === "#generation" ? s.hooksGeneration() : s.tenantForKey(k)),
    );
    answers.forEach((answer, i) => {
      const k = asked[i];
      if (k === "#generation") assert.equal(answer, generation);
      else if (k === "hx") {
        assert.equal(answer, null, "an unknown key, even one shaped like a marker");
      } else assert.equal((answer as { id: string }).id, k === "ha" ? "a" : "b");
    });
    assert.equal(await s.tenantForKey("#generation"), null);
  });

  test("hook heads and items list what listHooks lists, and activeHook reads one whole", async (s) => {
    await s.createTenant({ id: "t", policy: {}, created_at: "x" });
    const v = (sha256: string, body = "") => ({ ...version(sha256), body });
    await s.addHookVersion("t", "b", v("b1", "x".repeat(70_000)));
    await s.addHookVersion("t", "a", v("a1"));
    await s.addHookVersion("t", "a", v("a2", "second"));
    await s.setEnabled("t", "b", false);
    const whole = await s.listHooks("t");
    assert.deepEqual(
      await s.listHookHeads!("t"),
      whole.map(({ tenant_id, name, enabled, version, sha256, created_at }) => ({
        tenant_id,
        name,
        enabled,
        version,
        sha256,
        created_at,
      })),
    );
    assert.deepEqual(
      await s.listHookItems!("t"),
      whole.map(({ tenant_id, name, enabled, version, sha256, manifest }) => ({
        tenant_id,
        name,
        enabled,
        version,
        sha256,
        manifest: { trigger: manifest.trigger, priority: manifest.priority },
      })),
    );
    assert.deepEqual(await s.activeHook!("t", "a"), whole[0]);
    assert.equal((await s.activeHook!("t", "a"))?.body, "second");
    assert.equal(await s.activeHook!("t", "zz"), null);
  });

  test("blobs are content-addressed and stored once", async (s) => {
    await s.putBlob("abc", new Uint8Array([1, 2, 3]));
    await s.putBlob("abc", new Uint8Array([1, 2, 3]));
    assert.deepEqual(await s.getBlob("abc"), new Uint8Array([1, 2, 3]));
    assert.equal(await s.getBlob("missing"), null);
  });

  test("a blob over a part's size is stored in parts, read whole and swept whole", async (s) => {
    const bytes = new Uint8Array(BLOB_PART_BYTES * 2 + 12345);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31 + (i >> 20)) & 0xff;
    await s.putBlob("big", bytes);
    await s.putBlob("big", bytes); // stored again: only marked stored now
    assert.deepEqual(await s.getBlob("big"), bytes);
    const exact = bytes.subarray(0, BLOB_PART_BYTES * 2);
    await s.putBlob("exact", exact);
    assert.deepEqual(await s.getBlob("exact"), exact);
    assert.equal(await s.sweepBlobs(Date.now() + 1), 2);
    assert.equal(await s.getBlob("big"), null);
    // Stored again after the sweep (its parts went with it): whole again.
    await s.putBlob("big", bytes);
    assert.deepEqual(await s.getBlob("big"), bytes);
  });

  test("blobs nothing refers to are swept once old enough; referenced ones never", async (s) => {
    await s.createTenant({ id: "a", policy: {}, created_at: "t" });
    const bytes = new Uint8Array([7]);
    // The plugin ("p1") and an uploaded file ("p1-md") of a version, and two orphans.
    for (const sha of ["p1", "p1-md", "orphan", "fresh-orphan"]) await s.putBlob(sha, bytes);
    await s.addHookVersion("a", "guard", version("p1"));
    const cutoff = Date.now() + 1;
    while (Date.now() < cutoff) { /* the next blob is stored at or after the cutoff */ }
    await s.putBlob("fresh-orphan", bytes); // stored again: an upload under way protects it
    assert.equal(await s.sweepBlobs(cutoff), 1);
    assert.equal(await s.getBlob("orphan"), null);
    for (const sha of ["p1", "p1-md", "fresh-orphan"]) assert.ok(await s.getBlob(sha), sha);
    // Once the hook is gone, its plugin and files go at the next sweep.
    await s.deleteHook("a", "guard");
    assert.equal(await s.sweepBlobs(Date.now() + 1), 3);
    assert.equal(await s.getBlob("p1"), null);
  });

  test("a sweep of many blobs removes them all (in more than one step) and keeps referenced ones", async (s) => {
    await s.createTenant({ id: "a", policy: {}, created_at: "t" });
    const bytes = new Uint8Array(64 * 1024);
    for (let i = 0; i < 40; i++) await s.putBlob(`orphan-${i}`, bytes);
    await s.putBlob("p1", bytes);
    await s.addHookVersion("a", "guard", version("p1"));
    assert.equal(await s.sweepBlobs(Date.now() + 1), 40);
    assert.ok(await s.getBlob("p1"));
    assert.equal(await s.getBlob("orphan-39"), null);
  });

  test("a tenant's stored bytes add up its versions; pruning keeps the newest and the active", async (s) => {
    await s.createTenant({ id: "a", policy: {}, created_at: "t" });
    for (let i = 1; i <= 5; i++) {
      await s.addHookVersion("a", "guard", { ...version(`s${i}`), stored_bytes: 100 * i });
    }
    await s.addHookVersion("b", "guard", { ...version("b1"), stored_bytes: 7 });
    assert.equal(await s.storedBytes("a"), 1500);
    assert.equal(await s.rollback("a", "guard", 1), "ok");
    assert.equal(await s.pruneVersions("a", "guard", 2), 2);
    const kept = (await s.getHook("a", "guard"))!.versions.map((v) => v.version);
    assert.deepEqual(kept, [1, 4, 5], "the two newest, and version 1 because it is active");
    assert.equal(await s.storedBytes("a"), 100 + 400 + 500);
    assert.equal(await s.storedBytes("b"), 7, "another tenant's versions are its own");
    assert.equal(await s.pruneVersions("a", "guard", 2), 0);
  });

  test("hook versions are numbered, rolled back, disabled and deleted; the generation moves", async (s) => {
    await s.createTenant({ id: "a", policy: {}, created_at: "t" });
    const g0 = await s.hooksGeneration();
    const v1 = await s.addHookVersion("a", "guard", version("s1"));
    const v2 = await s.addHookVersion("a", "guard", version("s2"));
    assert.deepEqual([v1.version, v2.version, v2.sha256, v2.enabled], [1, 2, "s2", true]);
    assert.deepEqual(v2.manifest, manifest);
    assert.deepEqual(v2.sources, { "HOOK.md": "s2-md", "plugin.wasm": "s2" });
    const g1 = await s.hooksGeneration();
    assert.ok(g1 > g0);
    assert.equal(await s.rollback("a", "guard", 1), "ok");
    assert.equal((await s.getHook("a", "guard"))?.sha256, "s1");
    assert.equal(await s.rollback("a", "guard", 9), "no-version");
    assert.equal(await s.rollback("a", "nope", 1), "no-hook");
    const detail = await s.getHook("a", "guard");
    assert.deepEqual(detail?.versions.map((v) => [v.version, v.sha256]), [[1, "s1"], [2, "s2"]]);
    assert.equal((await s.setEnabled("a", "guard", false))?.enabled, false);
    assert.equal(await s.setEnabled("a", "nope", false), null);
    const v3 = await s.addHookVersion("a", "guard", version("s3"));
    assert.deepEqual([v3.version, v3.enabled], [3, true], "an upload enables it again");
    assert.ok((await s.hooksGeneration()) > g1);
    await s.addHookVersion(PLATFORM, "guard", version("p1"));
    assert.equal((await s.listHooks(PLATFORM))[0]?.sha256, "p1");
    assert.equal((await s.listHooks("a"))[0]?.sha256, "s3", "tenant and platform are apart");
    assert.equal(await s.deleteHook("a", "guard"), true);
    assert.equal(await s.deleteHook("a", "guard"), false);
    assert.equal(await s.getHook("a", "guard"), null);
    assert.equal((await s.listHooks(PLATFORM)).length, 1);
  });

  test("audit rows are read newest first, filtered, paginated and pruned", async (s) => {
    await s.createTenant({ id: "a", policy: {}, created_at: "t" });
    const rows = Array.from({ length: 25 }, (_, i) =>
      auditRow(`d${i}`, "a", {
        at: `2026-11-22T00:00:${String(i).padStart(2, "0")}.000Z`,
        session_id: i % 2 === 0 ? "even" : "odd",
        decision: i % 5 === 0 ? "block" : "allow",
        hook: i % 3 === 0 ? "guard" : "other",
      }));
    await s.appendAudit(rows.slice(0, 10));
    await s.appendAudit(rows.slice(10));
    await s.appendAudit([auditRow("x1", "b")]);
    assert.equal(await s.countAudit("a"), 25);
    const first = await s.readAudit({ tenant_id: "a", limit: 10 });
    assert.deepEqual(
      first.items.map((i) => i.decision_id),
      rows.slice(15).reverse().map((r) => r.decision_id),
    );
    assert.ok(first.next_cursor);
    const seen = [...first.items];
    let cursor: string | null = first.next_cursor;
    while (cursor) {
      const page = await s.readAudit({ tenant_id: "a", limit: 10, cursor });
      seen.push(...page.items);
      cursor = page.next_cursor;
    }
    assert.equal(seen.length, 25);
    assert.equal(new Set(seen.map((i) => i.decision_id)).size, 25, "no item twice");
    const odd = await s.readAudit({ tenant_id: "a", limit: 100, session_id: "odd" });
    assert.equal(odd.items.length, 12);
    const blocks = await s.readAudit({ tenant_id: "a", limit: 100, decision: "block" });
    assert.deepEqual(blocks.items.map((i) => i.decision_id), ["d20", "d15", "d10", "d5", "d0"]);
    const guard = await s.readAudit({ tenant_id: "a", limit: 100, hook: "guard", outcome: "ok" });
    assert.equal(guard.items.length, 9);
    const since = await s.readAudit({
      tenant_id: "a",
      limit: 100,
      since: "2026-11-22T00:00:20.000Z",
    });
    assert.equal(since.items.length, 5);
    assert.deepEqual(since.items[0]?.hooks[0], {
      name: "guard",
      level: "tenant",
      version: 1,
      sha256: "s",
      outcome: "ok",
      detail: null,
      duration_ms: 0.5,
      fuel: 1234,
    });
    assert.equal(since.items[0]?.dry_run, false);
    assert.equal(await s.pruneAudit("a", "2026-11-22T00:00:10.000Z"), 10);
    assert.equal(await s.countAudit("a"), 15);
    assert.equal(await s.countAudit("b"), 1, "another tenant's rows stay");
    await assert.rejects(s.readAudit({ tenant_id: "a", limit: 1, cursor: "forged" }), /cursor/);
  });

  test("a filtered audit read looks at `scan` rows at most and its cursor goes on from there", async (s) => {
    await s.createTenant({ id: "a", policy: {}, created_at: "t" });
    // 25 rows; only d3 and d20 ran the hook "rare", d3 alone blocked.
    const rows = Array.from({ length: 25 }, (_, i) =>
      auditRow(`d${i}`, "a", {
        at: `2026-11-22T00:00:${String(i).padStart(2, "0")}.000Z`,
        hook: i === 3 || i === 20 ? "rare" : "other",
        decision: i === 3 ? "block" : "allow",
      }));
    await s.appendAudit(rows);
    const pages: string[][] = [];
    let cursor: string | null | undefined;
    do {
      const page = await s.readAudit({
        tenant_id: "a",
        limit: 10,
        hook: "rare",
        scan: 10,
        ...(cursor ? { cursor } : {}),
      });
      pages.push(page.items.map((i) => i.decision_id));
      cursor = page.next_cursor;
    } while (cursor && pages.length < 10);
    // Rows d24..d15, d14..d5, d4..d0: each page looked at ten at most.
    assert.deepEqual(pages, [["d20"], [], ["d3"]]);
    // No filter, no bound: the plain index walk.
    assert.equal((await s.readAudit({ tenant_id: "a", limit: 20, scan: 10 })).items.length, 20);
    // A page that fills before the bound still ends at its last item.
    const blocked = await s.readAudit({ tenant_id: "a", limit: 1, decision: "allow", scan: 10 });
    assert.deepEqual(blocked.items.map((i) => i.decision_id), ["d24"]);
    assert.ok(blocked.next_cursor);
    const next = await s.readAudit({
      tenant_id: "a",
      limit: 1,
      decision: "allow",
      scan: 10,
      cursor: blocked.next_cursor,
    });
    assert.deepEqual(next.items.map((i) => i.decision_id), ["d23"]);
  });

  test("an audit page ends early at `bytes` of stored text, holds one row at least, and its cursor goes on", async (s) => {
    await s.createTenant({ id: "a", policy: {}, created_at: "t" });
    // Rows of about 10 KB each (a reason of 10,000 characters), and one of 50 KB.
    const rows = Array.from({ length: 12 }, (_, i) => ({
      ...auditRow(`d${i}`, "a", { decision: i === 5 ? "block" : "allow" }),
      reason: "r".repeat(i === 5 ? 50_000 : 10_000),
    }));
    await s.appendAudit(rows);
    const read = (extra: Partial<AuditQuery> = {}) =>
      s.readAudit({ tenant_id: "a", limit: 100, bytes: 35_000, ...extra });
    const pages: string[][] = [];
    let cursor: string | null | undefined;
    do {
      const page = await read(cursor ? { cursor } : {});
      pages.push(page.items.map((i) => i.decision_id));
      cursor = page.next_cursor;
    } while (cursor && pages.length < 20);
    // Three 10 KB rows fit in 35,000 bytes; the 50 KB row comes alone.
    assert.deepEqual(pages, [
      ["d11", "d10", "d9"],
      ["d8", "d7", "d6"],
      ["d5"],
      ["d4", "d3", "d2"],
      ["d1", "d0"],
    ]);
    assert.equal(pages[2]!.length, 1);
    assert.equal(
      (await read({ cursor: undefined, limit: 2 })).items.length,
      2,
      "limit still applies",
    );
    // With a filter and a scan bound too.
    const filtered = await read({ decision: "allow", scan: 5 });
    assert.deepEqual(filtered.items.map((i) => i.decision_id), ["d11", "d10", "d9"]);
    assert.ok(filtered.next_cursor);
    // Without `bytes`, no bound.
    const all = await s.readAudit({ tenant_id: "a", limit: 100 });
    assert.equal(all.items.length, 12);
    assert.equal(all.next_cursor, null);
  });

  test("retention removes a tenant's expired rows however many there are, oldest first", async (s) => {
    await s.createTenant({ id: "a", policy: {}, created_at: "t" });
    const at = (i: number) => new Date(Date.UTC(2026, 10, 1) + i * 1000).toISOString();
    for (let start = 0; start < 3000; start += 500) {
      await s.appendAudit(
        Array.from(
          { length: 500 },
          (_, j) => auditRow(`d${start + j}`, "a", { at: at(start + j) }),
        ),
      );
    }
    await s.appendAudit([auditRow("other", "b", { at: at(0) })]);
    // Rows 0..2499 are past retention (more than one step of the sweep), 2500..2999 are not.
    assert.equal(await s.pruneAudit("a", at(2500)), 2500);
    assert.equal(await s.countAudit("a"), 500);
    assert.equal(await s.pruneAudit("a", at(2500)), 0);
    assert.equal(await s.countAudit("b"), 1, "another tenant's rows stay");
  });

  test("usage adds up per tenant and minute", async (s) => {
    assert.deepEqual(await s.addUsage("a", 60_000, 1, 0), { events: 1, fuel: 0 });
    assert.deepEqual(await s.addUsage("a", 60_000, 1, 500), { events: 2, fuel: 500 });
    assert.deepEqual(await s.addUsage("a", 120_000, 1, 0), { events: 1, fuel: 0 });
    assert.deepEqual(await s.addUsage("b", 60_000, 0, 0), { events: 0, fuel: 0 });
  });

  test("usage of past minutes is pruned, however many there are; the current minute stays", async (s) => {
    for (let minute = 1; minute <= 1200; minute++) await s.addUsage("a", minute * 60_000, 1, 10);
    await s.addUsage("b", 60_000, 1, 0);
    // Everything before minute 1200 goes (1199 of a's, b's one), in more than one step.
    assert.equal(await s.pruneUsage(1200 * 60_000), 1200);
    assert.deepEqual(await s.addUsage("a", 1200 * 60_000, 1, 0), { events: 2, fuel: 10 });
    assert.deepEqual(await s.addUsage("a", 60_000, 0, 0), { events: 0, fuel: 0 }, "gone");
    assert.equal(await s.pruneUsage(1200 * 60_000), 1, "the re-made old minute only");
  });

  test("audit rows of a tenant deleted (or made again) since their event came are refused", async (s) => {
    await s.createTenant({ id: "a", policy: {}, created_at: "2026-01-01T00:00:00.000Z" });
    await s.createTenant({ id: "b", policy: {}, created_at: "2026-01-01T00:00:00.000Z" });
    const of = (id: string, tenant: string, createdAt: string) => ({
      ...auditRow(id, tenant),
      tenant_created_at: createdAt,
    });
    const first = "2026-01-01T00:00:00.000Z";
    assert.deepEqual(await s.appendAudit([of("a1", "a", first), of("b1", "b", first)]), []);
    assert.equal(await s.deleteTenant("a"), true);
    await s.createTenant({ id: "a", policy: {}, created_at: "2026-01-02T00:00:00.000Z" });
    // An event of the first "a", in flight across the deletion: refused; the rest of the batch kept.
    const gone = await s.appendAudit([of("a2", "a", first), of("b2", "b", first)]);
    assert.deepEqual(gone, ["a2"]);
    assert.equal(await s.countAudit("a"), 0, "the new tenant sees nothing of the old one");
    assert.equal(await s.countAudit("b"), 2);
    // Rows without the guard (edge ingest) are stored as before.
    assert.deepEqual(await s.appendAudit([auditRow("a3", "a")]), []);
  });

  test("leases count concurrent dispatches per tenant and expire", async (s) => {
    assert.equal(await s.acquireLease("a", "l1", 2, 1000, 5000), true);
    assert.equal(await s.acquireLease("a", "l2", 2, 1000, 5000), true);
    assert.equal(await s.acquireLease("a", "l3", 2, 1000, 5000), false, "both taken");
    assert.equal(await s.acquireLease("b", "l1", 2, 1000, 5000), true, "tenants are apart");
    await s.releaseLease("a", "l1");
    assert.equal(await s.acquireLease("a", "l3", 2, 1000, 5000), true);
    assert.equal(await s.acquireLease("a", "l4", 2, 1000, 5000), false);
    assert.equal(
      await s.acquireLease("a", "l4", 2, 6000, 9000),
      true,
      "a dead process's leases expire",
    );
    // A live process renews: its lease outlives the first expiry.
    assert.equal(await s.acquireLease("c", "r1", 1, 10_000, 20_000), true);
    await s.renewLeases(["r1"], 40_000);
    assert.equal(await s.acquireLease("c", "r2", 1, 30_000, 50_000), false, "renewed, still held");
    assert.equal(await s.acquireLease("c", "r2", 1, 40_001, 50_000), true, "lapsed after renewal");
  });

  test("a store that is closed rejects instead of answering", async (s) => {
    await s.ping();
    await s.close();
    await assert.rejects(s.ping());
    // Closing twice is the caller's business; the suite's finally does it.
    s.close = () => Promise.resolve();
  });
  test("captured events: kept with their rows, paged oldest first by size, pruned, per tenant", async (s) => {
    await s.createTenant({ id: "a", policy: {}, created_at: "t" });
    await s.createTenant({ id: "b", policy: {}, created_at: "t" });
    const at = (i: number) => `2026-11-22T00:00:0${i}.000Z`;
    await s.appendAudit([
      ...[0, 1, 2, 3].map((i) => ({
        ...auditRow(`d${i}`, "a", { at: at(i) }),
        event: JSON.stringify({ n: i, pad: "x".repeat(i === 2 ? 3000 : 10) }),
      })),
      auditRow("d4", "a", { at: at(4) }), // not captured
      { ...auditRow("e0", "b"), event: "{}" },
    ]);
    // Sent twice: kept once.
    await s.appendAudit([{ ...auditRow("d0", "a", { at: at(0) }), event: '{"again":1}' }]);
    const all = await s.readCaptures!({ tenant_id: "a", limit: 10, bytes: 1 << 20 });
    assert.deepEqual(all.items.map((i) => [i.decision_id, JSON.parse(i.event).n]), [
      ["d0", 0],
      ["d1", 1],
      ["d2", 2],
      ["d3", 3],
    ]);
    assert.equal(all.next_cursor, null);
    // A page ends before the event that would pass its bytes (it always holds one).
    const small = await s.readCaptures!({ tenant_id: "a", limit: 10, bytes: 100 });
    assert.deepEqual(small.items.map((i) => i.decision_id), ["d0", "d1"]);
    const next = await s.readCaptures!({
      tenant_id: "a",
      limit: 10,
      bytes: 100,
      cursor: small.next_cursor!,
    });
    assert.deepEqual(next.items.map((i) => i.decision_id), ["d2"]);
    assert.equal(next.items[0]!.cursor, next.next_cursor);
    const since = await s.readCaptures!({ tenant_id: "a", since: at(3), limit: 10, bytes: 1e6 });
    assert.deepEqual(since.items.map((i) => i.decision_id), ["d3"]);
    assert.equal(await s.pruneCaptures!("a", at(2)), 2);
    const left = await s.readCaptures!({ tenant_id: "a", limit: 10, bytes: 1e6 });
    assert.deepEqual(left.items.map((i) => i.decision_id), ["d2", "d3"]);
    assert.equal(await s.countAudit("a"), 5, "the audit rows stay: retention is the capture's own");
    assert.deepEqual(
      (await s.readCaptures!({ tenant_id: "b", limit: 10, bytes: 1e6 })).items.map((i) => i.event),
      ["{}"],
    );
    await s.deleteTenant("a");
    assert.deepEqual((await s.readCaptures!({ tenant_id: "a", limit: 9, bytes: 1e6 })).items, []);
  });

  test("shadows: set on a stored version, runs counted, replaced fresh, gone with the hook", async (s) => {
    await s.createTenant({ id: "a", policy: {}, created_at: "t" });
    await s.addHookVersion("a", "guard", version("s1"));
    await s.addHookVersion("a", "guard", { ...version("s2"), stage: true });
    assert.equal(await s.setShadow!("a", "guard", 9, "t"), false, "no such version");
    assert.equal(await s.setShadow!("a", "nope", 1, "t"), false, "no such hook");
    const g0 = await s.hooksGeneration();
    assert.equal(await s.setShadow!("a", "guard", 2, "t1"), true);
    assert.notEqual(await s.hooksGeneration(), g0, "engines see the shadow at their next event");
    assert.deepEqual(await s.listShadows!("a"), [{ name: "guard", version: 2, started_at: "t1" }]);
    const run = (id: string, agreed: boolean, v = 2) => ({
      tenant_id: "a",
      name: "guard",
      version: v,
      decision_id: id,
      at: "t",
      agreed,
      differs: agreed ? null : { changed: ["decision"], id },
    });
    await s.appendShadowRuns!([run("d1", true), run("d2", false), run("d3", false)]);
    await s.appendShadowRuns!([run("d9", false, 1)]); // of a version not in shadow: dropped
    const report = await s.readShadow!("a", "guard", { limit: 1 });
    assert.deepEqual([report.runs, report.agreed, report.kept, report.shadow?.version], [
      3,
      1,
      2,
      2,
    ]);
    assert.deepEqual(report.disagreements.map((d) => [d.decision_id, d.differs]), [
      ["d3", { changed: ["decision"], id: "d3" }],
    ]);
    const rest = await s.readShadow!("a", "guard", { limit: 5, cursor: report.next_cursor! });
    assert.deepEqual(rest.disagreements.map((d) => d.decision_id), ["d2"]);
    assert.equal(rest.next_cursor, null);
    // The shadowed version is spared by version pruning.
    await s.addHookVersion("a", "guard", version("s3"));
    await s.addHookVersion("a", "guard", version("s4"));
    await s.pruneVersions("a", "guard", 2);
    assert.notEqual(await s.getVersion("a", "guard", 2), null);
    // A new shadow starts with no runs; stopping deletes them.
    assert.equal(await s.getVersion("a", "guard", 1), null, "pruned: not in shadow");
    assert.equal(await s.setShadow!("a", "guard", 3, "t2"), true);
    assert.equal((await s.readShadow!("a", "guard", { limit: 5 })).runs, 0);
    await s.appendShadowRuns!([run("d5", true, 3)]);
    assert.equal(await s.setShadow!("a", "guard", null, "t3"), true);
    const stopped = await s.readShadow!("a", "guard", { limit: 5 });
    assert.deepEqual([stopped.shadow, stopped.runs], [null, 0]);
    await s.setShadow!("a", "guard", 4, "t4");
    await s.appendShadowRuns!([run("d6", false, 4)]);
    await s.deleteHook("a", "guard");
    assert.deepEqual(await s.listShadows!("a"), []);
    assert.equal((await s.readShadow!("a", "guard", { limit: 5 })).runs, 0);
  });

  test("a shadow keeps its first disagreements up to the cap and counts the rest", async (s) => {
    await s.createTenant({ id: "a", policy: {}, created_at: "t" });
    await s.addHookVersion("a", "guard", version("s1"));
    await s.setShadow!("a", "guard", 1, "t");
    const runs = Array.from({ length: MAX_SHADOW_DISAGREEMENTS + 3 }, (_, i) => ({
      tenant_id: "a",
      name: "guard",
      version: 1,
      decision_id: `d${i}`,
      at: "t",
      agreed: false,
      differs: { changed: ["decision"] },
    }));
    await s.appendShadowRuns!(runs);
    await s.appendShadowRuns!([{ ...runs[0]!, decision_id: "ok", agreed: true, differs: null }]);
    const report = await s.readShadow!("a", "guard", { limit: 1 });
    assert.deepEqual([report.runs, report.agreed, report.kept], [
      MAX_SHADOW_DISAGREEMENTS + 4,
      1,
      MAX_SHADOW_DISAGREEMENTS,
    ]);
    assert.equal(report.disagreements[0]!.decision_id, `d${MAX_SHADOW_DISAGREEMENTS - 1}`);
  });
}

function auditRow(
  id: string,
  tenant: string,
  o: { at?: string; session_id?: string; decision?: string; hook?: string } = {},
) {
  return {
    decision_id: id,
    tenant_id: tenant,
    at: o.at ?? "2026-11-22T00:00:00.000Z",
    session_id: o.session_id ?? "s",
    event_type: "pre-tool-call",
    decision: o.decision ?? "allow",
    reason: null,
    blocked_by: null,
    dry_run: false,
    hooks: [{
      name: o.hook ?? "guard",
      level: "tenant",
      version: 1,
      sha256: "s",
      outcome: "ok",
      detail: null,
      duration_ms: 0.5,
      fuel: 1234,
    }],
  };
}
