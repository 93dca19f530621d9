import assert from "node:assert/strict";
import postgres from "postgres";
import { openPostgresStore } from "../../packages/store-postgres/postgres.ts";
import { BLOB_PART_BYTES } from "../../packages/store/store.ts";
import { freshDatabase } from "../_pg.ts";
import { storeSuite } from "./_suite.ts";
import { addGuardVersion } from "./_versions.ts";

storeSuite("postgres", async () => openPostgresStore(await freshDatabase()));

Deno.test("postgres store: the migrations both stores share (the indexes) are applied", async () => {
  const url = await freshDatabase();
  const store = openPostgresStore(url);
  const sql = postgres(url, { onnotice: () => {} });
  try {
    await store.migrate();
    const rows = await sql`SELECT indexname FROM pg_indexes WHERE schemaname = 'public'`;
    const names = rows.map((r) => String(r.indexname));
    for (
      const index of [
        "blobs_stored",
        "hook_versions_head",
        "hook_versions_item",
        "blob_parts_stored",
      ]
    ) {
      assert.ok(names.includes(index), `${index} in ${names.join(", ")}`);
    }
  } finally {
    await sql.end();
    await store.close();
  }
});

Deno.test("postgres store: a big blob's parts go with it, and parts of an unfinished upload go too", async () => {
  const url = await freshDatabase();
  const store = openPostgresStore(url);
  const sql = postgres(url, { onnotice: () => {} });
  try {
    await store.migrate();
    await store.putBlob("big", new Uint8Array(BLOB_PART_BYTES * 3));
    const count = async () => Number((await sql`SELECT COUNT(*) AS n FROM blob_parts`)[0]!.n);
    assert.ok(await count() >= 3, "stored in parts");
    await store.sweepBlobs(Date.now() + 1);
    assert.equal(await count(), 0);
    await store.putBlob("unfinished", new Uint8Array(BLOB_PART_BYTES * 2));
    await sql`DELETE FROM blobs`;
    await store.sweepBlobs(Date.now() + 1);
    assert.equal(await count(), 0);
  } finally {
    await sql.end();
    await store.close();
  }
});

Deno.test("postgres store: hook versions stored before their listing fields had columns list with them", async () => {
  const url = await freshDatabase();
  let store = openPostgresStore(url);
  const sql = postgres(url, { onnotice: () => {} });
  try {
    await store.migrate();
    await store.createTenant({ id: "t", policy: {}, created_at: "x" });
    await addGuardVersion(store, { trigger: ["post-tool-call"], priority: 5 });
    await store.close();
    // The database as it was before the last two migrations.
    const v = (await sql`SELECT MAX(version) AS v FROM schema_migrations`)[0]!.v;
    await sql.unsafe(`DROP INDEX hook_versions_item;
      ALTER TABLE hook_versions DROP COLUMN triggers, DROP COLUMN priority;
      DELETE FROM schema_migrations WHERE version >= ${Number(v) - 1};`);
    store = openPostgresStore(url);
    await store.migrate();
    assert.deepEqual((await store.listHookItems!("t")).map((i) => i.manifest), [
      { trigger: ["post-tool-call"], priority: 5 },
    ]);
  } finally {
    await sql.end();
    await store.close();
  }
});
