/**
 * After an upload the engine has every plugin worker compile the tenant's
 * hooks, so no first event waits for it: one prepare job per worker that
 * lacks the plugin, none once every worker has it.
 */
import assert from "node:assert/strict";
import { WorkerRuntime } from "../../packages/runtime-wasm/worker/_worker_runtime.ts";
import { sha256Hex } from "../../packages/runtime-wasm/_cache.ts";
import { manifestSchema } from "../../packages/core/schema/manifest.ts";
import { createEngine, storedPluginSha } from "../../packages/service/engine.ts";
import { openSqliteStore } from "../../packages/store-sqlite/sqlite.ts";
import { pluginBytes } from "../integration/_plugins.ts";

Deno.test("engine.prepare compiles a tenant's new hooks on every idle worker before its events", async () => {
  const store = openSqliteStore(":memory:");
  await store.migrate();
  await store.createTenant({ id: "t", policy: {}, created_at: "x" });
  const bytes = await pluginBytes("guard_wasi");
  const sha256 = await sha256Hex(bytes);
  await store.putBlob(sha256, bytes);
  const manifest = manifestSchema().parse({
    name: "guard",
    description: "d",
    trigger: "pre-tool-call",
    isolation: "warm",
  });
  await store.addHookVersion("t", "guard", {
    sha256,
    runtime: "wasm",
    size_bytes: bytes.byteLength,
    manifest,
    body: "",
    built_from: "wasm",
    sources: {},
    created_at: "2026-11-22T00:00:00.000Z",
  });
  const jobs: string[] = [];
  const runtime = new WorkerRuntime({
    loadBytes: async (hook) => (await store.getBlob(storedPluginSha(hook)!))!,
    workers: 2,
    start: true,
    onDispatch: (type) => jobs.push(type),
  });
  const engine = createEngine({ store, runtimes: { wasm: runtime } });
  try {
    await engine.prepare("t", {});
    assert.deepEqual(jobs, ["prepare", "prepare"], "one job for each worker");
    // Every worker has it now: no job at all (a tenant's other hooks, after an upload).
    await engine.prepare("t", {});
    assert.deepEqual(jobs, ["prepare", "prepare"]);
    const served = await engine.hooks("t");
    const event = {
      event_type: "pre-tool-call" as const,
      session_id: "s",
      tool_name: "Bash",
      tool_input: { command: "rm -rf /" },
    };
    const result = await engine.dispatch("t", {}, served, event);
    assert.equal(result.decision, "block");
    assert.equal(result.hooks[0]?.outcome, "block");
  } finally {
    await engine.close();
    await runtime.close();
    await store.close();
  }
});
