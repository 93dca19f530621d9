/**
 * Plugin workers count the function types they hand the engine on the
 * process's one counter (rewriter `_type_budget.ts`), so a worker started
 * again cannot start the count anew while the engine's table keeps growing.
 * A file of its own: it needs the counter far from full.
 */
import assert from "node:assert/strict";
import { admittedTypes } from "../../packages/rewriter/mod.ts";
import { manyTypes } from "./_modules.ts";
import { corpusRuntime, request, wasmHook } from "../runtime-wasm/_corpus.ts";

Deno.test("a plugin worker's types count on the process's one counter", async () => {
  const runtime = corpusRuntime({ typed: manyTypes(7_000, 2_000) }, { worker: true, workers: 1 });
  try {
    const before = admittedTypes();
    const result = await runtime.run(request(wasmHook("typed")));
    assert.equal(result.exitCode, 0, JSON.stringify(result.failure));
    // Counted by the worker, seen here: a restarted worker could not start its count anew.
    assert.ok(admittedTypes() - before >= 2_000, `${admittedTypes() - before} counted`);
  } finally {
    await runtime.close?.();
  }
});
