import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { openSqliteStore } from "../../packages/store-sqlite/sqlite.ts";
import { BLOB_PART_BYTES, type Store } from "../../packages/store/store.ts";
import { storeSuite } from "./_suite.ts";
import { addGuardVersion } from "./_versions.ts";
import { tempDir } from "../_helpers.ts";

storeSuite("sqlite", async () => {
  const dir = await tempDir("hookbox-sqlite-");
  return openSqliteStore(`${dir}/hookbox.db`);
});

Deno.test("sqlite store: remembered keys and hook generation follow writes from this and other connections", async () => {
  const dir = await tempDir("hookbox-sqlite-");
  const a = openSqliteStore(`${dir}/hookbox.db`);
  const b = openSqliteStore(`${dir}/hookbox.db`);
  try {
    await a.migrate();
    await a.createTenant({ id: "t", policy: {}, created_at: "x" });
    await a.createKey({ id: "k1", tenant_id: "t", name: null, hash: "h1", created_at: "x" });
    assert.equal((await a.tenantForKey("h1"))?.id, "t");
    assert.equal(await a.tenantForKey("h2"), null);
    const g0 = await a.hooksGeneration();

    // Reads made together share one look at the other connections' commits.
    const [together, generation] = await Promise.all([a.tenantForKey("h1"), a.hooksGeneration()]);
    assert.equal(together?.id, "t");
    assert.equal(generation, g0);

    // Another connection's writes (another `hookbox serve` on the same file).
    await b.setPolicy("t", { events_per_minute: 7 });
    assert.deepEqual((await a.tenantForKey("h1"))?.policy, { events_per_minute: 7 });
    await b.createKey({ id: "k2", tenant_id: "t", name: null, hash: "h2", created_at: "x" });
    assert.equal((await a.tenantForKey("h2"))?.id, "t", "a key unknown a moment ago");
    await b.revokeKey("t", "k1");
    assert.equal(await a.tenantForKey("h1"), null, "revoked elsewhere");
    await addGuardVersion(b, { trigger: "pre-tool-call" });
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

function auditRows(from: number, count: number) {
  return Array.from({ length: count }, (_, i) => ({
    decision_id: `dec_${from + i}`,
    tenant_id: "t",
    at: new Date().toISOString(),
    session_id: "s",
    event_type: "pre_tool_call",
    decision: "allow",
    reason: null,
    blocked_by: null,
    dry_run: false,
    hooks: [{
      name: "guard",
      level: "tenant" as const,
      version: 1,
      sha256: "a".repeat(64),
      outcome: "allow" as const,
      duration_ms: 0.1,
      fuel: 1234,
      detail: null,
    }],
  }));
}

const sizeOf = async (path: string) => (await Deno.stat(path).catch(() => ({ size: 0 }))).size;

/**
 * Appends audit rows 500 at a time, one commit after another, until `rows`
 * are in (row 0 is already); the rows written and the log's largest size.
 */
/** The checkpoint sequence number in the header of `path`'s log (`-wal`). */
async function walSequence(path: string): Promise<number> {
  using file = await Deno.open(`${path}-wal`);
  const header = new Uint8Array(16);
  let got = 0;
  while (got < header.length) {
    const n = await file.read(header.subarray(got));
    if (n === null) break;
    got += n;
  }
  return new DataView(header.buffer).getUint32(12);
}

async function appendUntil(store: Store, path: string, rows: number) {
  let written = 1;
  let largestLog = 0;
  while (written < rows) {
    await store.appendAudit(auditRows(written, 500));
    written += 500;
    largestLog = Math.max(largestLog, await sizeOf(`${path}-wal`));
  }
  return { written, largestLog };
}

Deno.test("sqlite store: when the checkpointer thread fails, the serving connection checkpoints again and the log stays bounded", async () => {
  const dir = await tempDir("hookbox-sqlite-");
  const path = `${dir}/hookbox.db`;
  const failed = Promise.withResolvers<void>();
  const store = openSqliteStore(path, {
    checkpointMs: 20,
    checkpointer: new URL("./fixtures/failing_checkpointer.ts", import.meta.url),
    onCheckpointer: (state) => state === "failed" && failed.resolve(),
  });
  try {
    await store.migrate();
    await store.appendAudit(auditRows(0, 1)); // starts the thread, which says ready, then fails
    await failed.promise; // the store has taken its checkpoints back
    // About three times SQLite's automatic threshold (1,000 log pages of 4 KiB) in rows.
    let written = 1;
    let largestLog = 0;
    while ((await sizeOf(path)) + largestLog < 14 * 1024 * 1024) {
      await store.appendAudit(auditRows(written, 500));
      written += 500;
      largestLog = Math.max(largestLog, await sizeOf(`${path}-wal`));
    }
    assert.equal(await store.countAudit("t"), written, "nothing lost on the way");
    assert.ok(
      largestLog < 8 * 1024 * 1024,
      `the log is checkpointed and restarted: at most ${largestLog} bytes`,
    );
  } finally {
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sqlite store: a checkpointer thread that cannot start leaves commits working, and the next commit starts it", async () => {
  const dir = await tempDir("hookbox-sqlite-");
  const ready = Promise.withResolvers<void>();
  let refuse = true;
  let asked = 0;
  const store = openSqliteStore(`${dir}/hookbox.db`, {
    checkpointMs: 20,
    onCheckpointer: (state) => state === "ready" && ready.resolve(),
    // What host-deno's startModuleWorker does when the process is out of file descriptors.
    startWorker: (url) => {
      asked++;
      if (refuse) throw new Error("Too many open files (os error 24): no file descriptors left");
      return new Worker(url, { type: "module" });
    },
  });
  try {
    await store.migrate();
    await store.appendAudit(auditRows(0, 10));
    assert.equal(asked, 1, "the first commit asked for the thread");
    assert.equal(await store.countAudit("t"), 10, "and was stored all the same");
    refuse = false;
    await store.appendAudit(auditRows(10, 10));
    await ready.promise;
    assert.equal(asked, 2, "the next commit started it");
    assert.equal(await store.countAudit("t"), 20);
  } finally {
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sqlite store: the log is checkpointed off the serving connection and stays bounded", async () => {
  const dir = await tempDir("hookbox-sqlite-");
  const path = `${dir}/hookbox.db`;
  const store = openSqliteStore(path, { checkpointMs: 20 });
  try {
    await store.migrate();
    await store.appendAudit(auditRows(0, 1)); // starts the checkpointer
    await new Promise((resolve) => setTimeout(resolve, 300));
    const before = await sizeOf(path);
    // A steady stream of group commits, far below SQLite's own threshold of
    // 1,000 log pages per checkpoint on the serving connection. Each batch
    // waits for a checkpoint to carry it into the database file (the file
    // grows), so a slow machine paces the writes instead of the checkpointer
    // falling behind them.
    let written = 1;
    let largestLog = 0;
    let after = before;
    for (let batch = 0; batch < 60; batch++) {
      await store.appendAudit(auditRows(written, 40));
      written += 40;
      largestLog = Math.max(largestLog, await sizeOf(`${path}-wal`));
      const was = after;
      for (let tries = 0; tries < 250 && after <= was; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 8));
        after = await sizeOf(path);
      }
      assert.ok(after > was, `batch ${batch} reached the database file (${was} → ${after} bytes)`);
    }
    assert.equal(await store.countAudit("t"), written, "nothing lost on the way");
    // Without restarting the log after each checkpoint it would hold every page written.
    assert.ok(
      largestLog < after / 2,
      `the log restarts: at most ${largestLog} bytes against a ${after}-byte file`,
    );
  } finally {
    await store.close();
  }
});

Deno.test("sqlite store: a checkpointer thread that falls behind gives the checkpoints back until the log restarts", async () => {
  const dir = await tempDir("hookbox-sqlite-");
  const path = `${dir}/hookbox.db`;
  const states: string[] = [];
  const ready = Promise.withResolvers<void>();
  const limit = 2 * 1024 * 1024;
  const store = openSqliteStore(path, {
    checkpointMs: 20,
    logLimitBytes: limit,
    checkpointer: new URL("./fixtures/idle_checkpointer.ts", import.meta.url),
    onCheckpointer: (state) => {
      states.push(state);
      if (state === "ready") ready.resolve();
    },
  });
  try {
    await store.migrate();
    await store.appendAudit(auditRows(0, 1)); // starts the thread, which never checkpoints
    await ready.promise;
    const { written, largestLog } = await appendUntil(store, path, 50_000);
    assert.equal(await store.countAudit("t"), written, "nothing lost on the way");
    const file = await sizeOf(path);
    assert.ok(file > 8 * 1024 * 1024, `the rows reached the database file (${file} bytes)`);
    // Past the limit the serving connection checkpoints at SQLite's own
    // threshold (1,000 pages of 4 KiB) and the restart cuts the log back.
    assert.ok(
      largestLog < limit + 6 * 1024 * 1024,
      `the log stays bounded: at most ${largestLog} bytes`,
    );
    assert.ok(states.includes("behind") && states.includes("caught up"), states.join(", "));
  } finally {
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sqlite store: once the thread says it copied the log through, the serving connection's next commits restart it", async () => {
  // Under back-to-back commits the thread's copies always end during a commit, so the log never
  // restarts by itself (it held every frame written: 2 GB in 15 s). When the thread says it
  // copied a long log through, the serving connection copies the few frames since, between two
  // commits, and the commit after that restarts the log. This thread only says so, and copies
  // nothing: what happens to the log is the store's doing.
  const dir = await tempDir("hookbox-sqlite-");
  const path = `${dir}/hookbox.db`;
  const copied = Promise.withResolvers<void>();
  const store = openSqliteStore(path, {
    checkpointMs: 20,
    // The fallback for a thread that falls behind, out of the way.
    logLimitBytes: 1024 * 1024 * 1024,
    checkpointer: new URL("./fixtures/copying_checkpointer.ts", import.meta.url),
    onLogCopied: () => copied.resolve(),
  });
  try {
    await store.migrate();
    await store.appendAudit(auditRows(0, 500)); // starts the thread
    await copied.promise;
    // A restart writes a new log header with the next checkpoint sequence number.
    const before = await walSequence(path);
    await store.appendAudit(auditRows(500, 500)); // its commit is followed by the copy
    await store.appendAudit(auditRows(1000, 500)); // this one starts the log over
    assert.notEqual(await walSequence(path), before, "the log restarted");
    assert.equal(await store.countAudit("t"), 1500, "nothing lost on the way");
  } finally {
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sqlite store: audit pages are read on the checkpointer thread once it is up, and here when it fails", async () => {
  for (const failing of [false, true]) {
    const dir = await tempDir("hookbox-sqlite-");
    const where: string[] = [];
    const state = Promise.withResolvers<string>();
    const store = openSqliteStore(`${dir}/hookbox.db`, {
      ...(failing
        ? { checkpointer: new URL("./fixtures/failing_checkpointer.ts", import.meta.url) }
        : {}),
      onCheckpointer: (s) => (failing ? s === "failed" : s === "ready") && state.resolve(s),
      onRead: (w) => where.push(w),
    });
    try {
      await store.migrate();
      await store.appendAudit(auditRows(0, 30)); // starts the thread
      await state.promise;
      const page = await store.readAudit({ tenant_id: "t", limit: 10 });
      assert.equal(page.items.length, 10);
      assert.ok(page.next_cursor);
      // A row committed here is seen by the next read, wherever it runs.
      await store.appendAudit(auditRows(30, 1));
      const filtered = await store.readAudit({
        tenant_id: "t",
        limit: 100,
        session_id: "s",
        scan: 5,
      });
      assert.equal(filtered.items[0]?.decision_id, "dec_30");
      assert.ok(filtered.next_cursor, "the bounded scan goes on");
      assert.deepEqual(new Set(where), new Set([failing ? "here" : "thread"]));
    } finally {
      await store.close();
      await Deno.remove(dir, { recursive: true });
    }
  }
});

Deno.test("sqlite store: a big blob waits for the checkpointer thread, so the log never outgrows its limit", async () => {
  const dir = await tempDir("hookbox-sqlite-");
  const told: string[] = [];
  const ready = Promise.withResolvers<void>();
  const store = openSqliteStore(`${dir}/hookbox.db`, {
    logLimitBytes: 8 * 1024 * 1024,
    onCheckpointer: (s) => {
      told.push(s);
      if (s === "ready") ready.resolve();
    },
  });
  try {
    await store.migrate();
    await store.appendAudit(auditRows(0, 1)); // starts the thread
    await ready.promise;
    const bytes = new Uint8Array(BLOB_PART_BYTES * 40);
    for (let i = 0; i < bytes.length; i += 4096) bytes[i] = i & 0xff;
    await store.putBlob("big", bytes);
    await store.appendAudit(auditRows(1, 1)); // a commit looks at the log again
    assert.deepEqual(told, ["ready"], "the serving connection never had to copy the log itself");
    assert.deepEqual(await store.getBlob("big"), bytes);
  } finally {
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sqlite store: a hook listing is read on the checkpointer thread, with each hook's trigger and priority", async () => {
  const dir = await tempDir("hookbox-sqlite-");
  const where: string[] = [];
  const ready = Promise.withResolvers<void>();
  const store = openSqliteStore(`${dir}/hookbox.db`, {
    onCheckpointer: (s) => s === "ready" && ready.resolve(),
    onRead: (w) => where.push(w),
  });
  try {
    await store.migrate();
    await store.appendAudit(auditRows(0, 1)); // starts the thread
    await ready.promise;
    await store.createTenant({ id: "t", policy: {}, created_at: "x" });
    await addGuardVersion(store, {
      description: "d".repeat(16_000),
      trigger: ["pre-tool-call", "post-tool-call"],
      priority: 7,
    });
    const items = await store.listHookItems!("t");
    assert.deepEqual(items.map((i) => i.manifest), [
      { trigger: ["pre-tool-call", "post-tool-call"], priority: 7 },
    ]);
    assert.deepEqual(where, ["thread"], "read off the thread that answers events");
  } finally {
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sqlite store: an audit page whose rows are deleted between its two reads ends where they were", async () => {
  const dir = await tempDir("hookbox-sqlite-");
  const path = `${dir}/hookbox.db`;
  let reads = 0;
  let other: DatabaseSync | null = null;
  const store = openSqliteStore(path, {
    // After the sizes are read, retention (another connection) deletes the newest rows. The
    // hook runs after a read on the checkpointer thread, before one on this connection.
    onRead: (where) => {
      reads++;
      if ((where === "thread" && reads === 1) || (where === "here" && reads === 2)) {
        other!.exec("DELETE FROM audit WHERE decision_id IN ('dec_9', 'dec_8', 'dec_7')");
      }
    },
  });
  try {
    await store.migrate();
    other = new DatabaseSync(path);
    await store.createTenant({ id: "t", policy: {}, created_at: "t" });
    await store.appendAudit(auditRows(0, 10).map((r) => ({ ...r, reason: "r".repeat(1000) })));
    // Three rows (~1,180 bytes each) fit in 4,000: dec_9, dec_8, dec_7 — gone by the time
    // they are read.
    const first = await store.readAudit({ tenant_id: "t", limit: 100, bytes: 4000 });
    assert.deepEqual(first.items, []);
    assert.ok(first.next_cursor, "the page goes on below them");
    const next = await store.readAudit({
      tenant_id: "t",
      limit: 100,
      bytes: 4000,
      cursor: first.next_cursor,
    });
    assert.deepEqual(next.items.map((i) => i.decision_id), ["dec_6", "dec_5", "dec_4"]);
  } finally {
    other?.close();
    await store.close();
  }
});

Deno.test("sqlite store: the migrations both stores share (the indexes) are applied", async () => {
  const dir = await tempDir("hookbox-sqlite-");
  const store = openSqliteStore(`${dir}/hookbox.db`);
  await store.migrate();
  await store.close();
  const db = new DatabaseSync(`${dir}/hookbox.db`);
  try {
    const names = db.prepare("SELECT name FROM sqlite_master WHERE type = 'index'").all()
      .map((r) => String((r as { name: string }).name));
    for (const index of ["blobs_stored", "hook_versions_head"]) {
      assert.ok(names.includes(index), `${index} in ${names.join(", ")}`);
    }
  } finally {
    db.close();
  }
});

Deno.test("sqlite store: a big blob is written a part at a time, letting other work in between", async () => {
  const dir = await tempDir("hookbox-sqlite-");
  const store = openSqliteStore(`${dir}/hookbox.db`);
  try {
    await store.migrate();
    const bytes = new Uint8Array(BLOB_PART_BYTES * 8);
    let turns = 0;
    let writing = true;
    const ticker = (async () => {
      while (writing) {
        await new Promise((resolve) => setTimeout(resolve, 0));
        turns++;
      }
    })();
    await store.putBlob("big", bytes);
    writing = false;
    await ticker;
    assert.ok(turns >= 7, `the loop turned ${turns} times during the write`);
    const db = new DatabaseSync(`${dir}/hookbox.db`);
    const count = () =>
      Number((db.prepare("SELECT COUNT(*) AS n FROM blob_parts").get() as { n: number }).n);
    assert.equal(count(), 8);
    // An upload that never finished leaves parts without a blob: the sweep removes them too.
    db.prepare("DELETE FROM blobs").run();
    await store.sweepBlobs(Date.now() + 1);
    assert.equal(count(), 0);
    db.close();
  } finally {
    await store.close();
  }
});

Deno.test("sqlite store: hook versions stored before their listing fields had columns list with them", async () => {
  const dir = await tempDir("hookbox-sqlite-");
  const path = `${dir}/hookbox.db`;
  let store = openSqliteStore(path);
  try {
    await store.migrate();
    await store.createTenant({ id: "t", policy: {}, created_at: "x" });
    await addGuardVersion(store, { trigger: ["post-tool-call"], priority: 5 });
    await store.close();
    // The database as it was before the last two migrations.
    const db = new DatabaseSync(path);
    const last = Number(
      (db.prepare("SELECT MAX(version) AS v FROM schema_migrations").get() as { v: number }).v,
    );
    db.exec(`DROP INDEX hook_versions_item;
      ALTER TABLE hook_versions DROP COLUMN triggers;
      ALTER TABLE hook_versions DROP COLUMN priority;
      DELETE FROM schema_migrations WHERE version >= ${last - 1};`);
    db.close();
    store = openSqliteStore(path);
    await store.migrate();
    assert.deepEqual((await store.listHookItems!("t")).map((i) => i.manifest), [
      { trigger: ["post-tool-call"], priority: 5 },
    ]);
  } finally {
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});
