/**
 * Warm instances of one plugin share one pristine memory image: the first
 * instance's snapshot holds it (and counts it against the warm-pool cap), the
 * others restore from the same bytes and hold only their own memory (and
 * block map) — and
 * each still starts every call from the pristine state.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { blockMapPages } from "../../packages/rewriter/mod.ts";
import { corpusRuntime, request, wasmHook } from "./_corpus.ts";

Deno.test("warm instances of one plugin share its memory image and still reset", async () => {
  const runtime = corpusRuntime();
  try {
    const hook = wasmHook("state_counter", { isolation: "warm" });
    const tenants = ["a", "b", "c"];
    for (let round = 0; round < 3; round++) {
      for (const tenantId of tenants) {
        const result = await runtime.run({ ...request(hook), tenantId });
        assertEquals([result.exitCode, result.stdout], [0, "11"], `${tenantId}, round ${round}`);
      }
    }
    const page = 64 * 1024; // state_counter has one page of memory
    // and, its writes tracked, a block map: a byte per 256-byte block of its 16 MiB cap.
    const map = blockMapPages(16 * 1024 * 1024 / page) * page;
    const { keptPluginBytes, loadedPluginBytes, ...stats } = runtime.stats!();
    assertEquals(stats, {
      warmInstances: 3,
      warmIdleBytes: 3 * (page + map) + page, // three memories and maps, one shared image
      running: 0,
      keptPlugins: 1, // one plugin for the three tenants
      pooledMemoryBytes: 0, // warm instances: no fresh memories
    });
    assertEquals(keptPluginBytes! > 0, true);
    assertEquals(loadedPluginBytes, keptPluginBytes, "loaded once");
  } finally {
    await runtime.close?.();
  }
});
