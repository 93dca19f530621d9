import assert from "node:assert/strict";
import { MAX_WARM_PER_KEY, WarmPool } from "../../../src/runtime/wasm/_pool.ts";
import type { PluginInstance } from "../../../src/runtime/wasm/_instance.ts";

/** A stand-in instance that records whether it was closed. */
function fake(): PluginInstance & { closed: boolean } {
  const f = {
    busy: false,
    reusable: true,
    closed: false,
    close() {
      f.closed = true;
      return Promise.resolve();
    },
  };
  return f as unknown as PluginInstance & { closed: boolean };
}

Deno.test("WarmPool keeps up to MAX_WARM_PER_KEY instances per key for concurrent calls and reuses them", async () => {
  const pool = new WarmPool();
  const made = [];
  for (let i = 0; i < MAX_WARM_PER_KEY; i++) {
    assert.equal(pool.acquire("k"), null, "room for another warm instance");
    const instance = fake();
    pool.add("k", instance);
    made.push(instance);
  }
  assert.equal(pool.acquire("k"), "busy", "all in use: the caller runs a throw-away one");
  await pool.release("k", made[0]!);
  assert.equal(pool.acquire("k"), made[0], "a released instance is handed out again");
  assert.equal(pool.acquire("other"), null, "keys are apart (tenants never share)");
});

Deno.test("WarmPool closes and forgets an instance that failed, and closes idle ones on close()", async () => {
  const pool = new WarmPool();
  const failed = fake();
  pool.add("k", failed);
  failed.reusable = false;
  await pool.release("k", failed);
  assert.equal(failed.closed, true);
  assert.equal(pool.acquire("k"), null, "its place is free again");
  const idle = fake();
  pool.add("k", idle);
  await pool.release("k", idle);
  const busy = fake();
  pool.add("k", busy);
  await pool.close();
  assert.equal(idle.closed, true);
  assert.equal(busy.closed, false, "a busy instance is closed when its call releases it");
  await pool.release("k", busy);
  assert.equal(busy.closed, true);
});
