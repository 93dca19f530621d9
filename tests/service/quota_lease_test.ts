/**
 * `Quotas` leases across processes on one store: a live process renews the
 * leases it holds; one killed with its leases held frees them within
 * `LEASE_MS` of its last renewal, so a crash never locks a tenant out.
 */
import assert from "node:assert/strict";
import { openSqliteStore } from "../../packages/store-sqlite/sqlite.ts";
import { LEASE_MS, Quotas } from "../../packages/service/quota.ts";
import { tempDir } from "../_helpers.ts";

Deno.test("a process that dies with leases held frees them within LEASE_MS; a live one keeps them", async () => {
  const dir = await tempDir("hookbox-leases-");
  const store = openSqliteStore(`${dir}/hookbox.db`);
  await store.migrate();
  let clock = 1_000_000;
  const policy = { max_concurrent: 2 };
  const crashed = new Quotas(store, () => clock);
  const other = new Quotas(store, () => clock);
  try {
    await crashed.lease("acme", policy);
    await crashed.lease("acme", policy);
    await assert.rejects(other.lease("acme", policy), /2 concurrent dispatches/);
    // While it lives it renews: past the first expiry the leases still hold.
    clock += LEASE_MS - 1000;
    await crashed.renew();
    clock += LEASE_MS - 1000;
    await assert.rejects(other.lease("acme", policy), /2 concurrent dispatches/);
    // Killed (no renewal, no release): within LEASE_MS of the last renewal the tenant is free.
    crashed.stop();
    clock += 1001;
    const release = await other.lease("acme", policy);
    await release();
    assert.equal(other.held, 0);
  } finally {
    crashed.stop();
    other.stop();
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});
