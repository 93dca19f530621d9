/**
 * The warm-up `hookbox serve` runs before it listens: its plugin is its
 * committed source, it runs its events on the server's own workers, and it
 * leaves nothing in the real store, metrics or runtimes.
 */
import assert from "node:assert/strict";
import { WARM_UP_PLUGIN_BASE64 } from "../../packages/deno/serve/_warm_up_plugin.ts";
import { createDenoHookBuilder } from "../../packages/deno/serve/hook_builder.ts";
import { warmUp, warmUpPlugin } from "../../packages/deno/serve/warm_up.ts";
import { sha256Hex } from "../../packages/runtime-wasm/_cache.ts";
import { openSqliteStore } from "../../packages/store-sqlite/sqlite.ts";
import { warmUpPluginSource } from "../_warm_up_source.ts";
import { harness, toolEvent, wasmFolder } from "./_api.ts";

Deno.test("the committed warm-up plugin is warm_up.wat assembled (scripts/build_warm_up_plugin.ts)", async () => {
  assert.equal(WARM_UP_PLUGIN_BASE64, await warmUpPluginSource());
});

Deno.test("warm-up runs its events through the server's workers and leaves the real service as it was", async () => {
  const h = await harness(openSqliteStore(":memory:"), undefined, 2);
  try {
    const report = await warmUp(h.runtimes, createDenoHookBuilder(), 400);
    assert.equal(report.events, 400);
    assert.equal(report.failed, 0, "every event answered, no hook failed");
    // Event i is a Bash command with a "!" when i % 20 === 0: the plugin denies those.
    assert.equal(report.blocked, 20);
    // Nothing reached the real store or metrics.
    assert.deepEqual((await h.call("GET", "/v1/tenants")).body.items, []);
    const metrics = (await h.call("GET", "/metrics")).body as string;
    assert.doesNotMatch(metrics, /warm-up/);
    // Its plugin was lent to the runtimes, never stored.
    const lent = await sha256Hex(warmUpPlugin());
    assert.equal(await h.store.getBlob(lent), null);
    // And the server works as before.
    const key = await h.tenant("acme");
    const up = await h.call("PUT", "/v1/hooks/guard", {
      key,
      body: await wasmFolder("guard", "guard_wasi"),
    });
    assert.equal(up.status, 201);
    const answer = await h.call("POST", "/v1/events", { key, body: toolEvent("rm -rf /") });
    assert.equal(answer.body.decision, "block");
    assert.equal((await h.call("GET", "/v1/audit", { key })).body.items.length, 1);
  } finally {
    await h.close();
  }
});

Deno.test("a warm-up that cannot set up throws (the server then starts cold)", async () => {
  const h = await harness(openSqliteStore(":memory:"));
  try {
    const refusing = {
      build: () => Promise.reject(new Error("no builds here")),
    };
    await assert.rejects(warmUp(h.runtimes, refusing, 10), /warm-up: warm-a answered 5\d\d/);
  } finally {
    await h.close();
  }
});
