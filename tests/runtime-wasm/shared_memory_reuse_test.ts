/**
 * Plugins that share one module (`shareCode`) take their memories from one
 * pool: a memory, block map or snapshot image another plugin's closed
 * instance gave back. Whatever the plugin before wrote, each instance starts
 * from its own data and zeros elsewhere, and a warm one restores its own
 * pristine state, never the previous owner's.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { blockMapPages } from "../../packages/rewriter/mod.ts";
import { corpusRuntime, request, wasmHook } from "./_corpus.ts";
import { probe } from "./_memory_probe.ts";

/**
 * Eight plugins of one module: each has its tag at 1000; every third also
 * "AAAA" at 2000, every third after the first "CCCC" at 3000.
 */
const PLUGINS = Object.fromEntries(
  Array.from({ length: 8 }, (_, i) => {
    const data: Record<number, string> = { 1000: `tag${i}` };
    if (i % 3 === 0) data[2000] = "AAAA";
    if (i % 3 === 1) data[3000] = "CCCC";
    return [`probe_${i}`, probe(`probe_${i}`, data)];
  }),
);
/** What plugin `i` prints on every call, whatever ran before it. */
const expected = (i: number) =>
  `tag${i}` + (i % 3 === 0 ? "AAAA" : "....") + (i % 3 === 1 ? "CCCC" : "....");
const PAGE = 65536;

for (const isolation of ["fresh", "warm"] as const) {
  Deno.test(`${isolation} instances of plugins sharing a module never see another's memory`, async () => {
    // warm: idle instances in 4 MiB, each of the eight 640 KiB (memory, block map, image), so
    // each next plugin's instance closes the oldest and takes what it gave back.
    const options = isolation === "warm" ? { warmBytes: 4 * 1024 * 1024 } : {};
    const runtime = corpusRuntime(PLUGINS, { shareCode: true, ...options });
    try {
      for (let round = 0; round < 3; round++) {
        for (let i = 0; i < 8; i++) {
          const hook = wasmHook(`probe_${i}`, { isolation });
          const result = await runtime.run({ ...request(hook), tenantId: `t${i}` });
          assertEquals(
            [result.failure, result.stdout],
            [undefined, expected(i)],
            `plugin ${i}, round ${round}`,
          );
          // Another tenant of plugin 0, called all along: its warm instance shares plugin 0's
          // image with t0's, which must not be handed to another plugin when t0's closes.
          const other = await runtime.run({
            ...request(wasmHook("probe_0", { isolation })),
            tenantId: "u",
          });
          assertEquals(
            [other.failure, other.stdout],
            [undefined, expected(0)],
            `u, ${i}, ${round}`,
          );
        }
      }
      // What a closed instance gave back is pooled, for any plugin of the module to take.
      const map = blockMapPages(16 * 1024 * 1024 / PAGE) * PAGE;
      assertEquals(
        runtime.stats!().pooledMemoryBytes,
        isolation === "fresh" ? 4 * PAGE : 4 * PAGE + map + 4 * PAGE,
        isolation === "fresh"
          ? "one memory for the eight plugins' fresh calls"
          : "the memory, block map and image of the last warm instance closed",
      );
    } finally {
      await runtime.close?.();
    }
  });
}
