import assert from "node:assert/strict";
import postgres from "postgres";
import { openPostgresStore } from "../../packages/store-postgres/postgres.ts";
import { freshDatabase } from "../_pg.ts";
import { storeSuite } from "./_suite.ts";

storeSuite("postgres", async () => openPostgresStore(await freshDatabase()));

Deno.test("postgres store: the migrations both stores share (the indexes) are applied", async () => {
  const url = await freshDatabase();
  const store = openPostgresStore(url);
  const sql = postgres(url, { onnotice: () => {} });
  try {
    await store.migrate();
    const rows = await sql`SELECT indexname FROM pg_indexes WHERE schemaname = 'public'`;
    const names = rows.map((r) => String(r.indexname));
    for (const index of ["blobs_stored", "hook_versions_head"]) {
      assert.ok(names.includes(index), `${index} in ${names.join(", ")}`);
    }
  } finally {
    await sql.end();
    await store.close();
  }
});
