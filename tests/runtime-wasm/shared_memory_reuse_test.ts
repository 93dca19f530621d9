/**
 * Plugins that share one module (`shareCode`) take their memories from one
 * pool: a memory, block map or snapshot image another plugin's closed
 * instance gave back. Whatever the plugin before wrote, each instance starts
 * from its own data and zeros elsewhere, and a warm one restores its own
 * pristine state, never the previous owner's.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { blockMapPages } from "../../packages/rewriter/mod.ts";
import { corpusRuntime, request, wasmHook, watBytes } from "./_corpus.ts";

/**
 * A WASI command whose code is the same for every `data` (so the plugins
 * share one module): it prints the four bytes at 1000, 2000 and 3000 (a
 * zero as "."), then overwrites all twelve with "x" and fills 4096..8191.
 */
function probe(name: string, data: Record<number, string>): Uint8Array {
  const segments = Object.entries(data)
    .map(([at, text]) => `(data (i32.const ${at}) "${text}")`)
    .join("\n  ");
  return watBytes(
    name,
    `(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 4)
  ${segments}
  (func $show (param $from i32) (param $to i32)
    (local $i i32) (local $b i32)
    (local.set $i (i32.const 0))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (i32.const 4)))
        (local.set $b (i32.load8_u (i32.add (local.get $from) (local.get $i))))
        (i32.store8 (i32.add (local.get $to) (local.get $i))
          (select (i32.const 46) (local.get $b) (i32.eqz (local.get $b))))
        (i32.store8 (i32.add (local.get $from) (local.get $i)) (i32.const 120))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next))))
  (func (export "_start")
    (call $show (i32.const 1000) (i32.const 64))
    (call $show (i32.const 2000) (i32.const 68))
    (call $show (i32.const 3000) (i32.const 72))
    (memory.fill (i32.const 4096) (i32.const 7) (i32.const 4096))
    (i32.store (i32.const 0) (i32.const 64))
    (i32.store (i32.const 4) (i32.const 12))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 16)))))`,
  );
}

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
