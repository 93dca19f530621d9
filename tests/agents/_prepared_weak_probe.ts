/**
 * Subprocess of oneshot_cache_test.ts (run with `--expose-gc`): loads a
 * plugin through the disk cache twice (a write, then a read of the entry),
 * drops every reference, collects, and prints whether the loaded plugins are
 * still alive (`{"alive": [first, second]}`): the cache must not hold them.
 *
 *   deno run -A --v8-flags=--expose-gc _prepared_weak_probe.ts CACHE_DIR
 */
import { preparedFromDiskCache } from "../../packages/deno/prepared_cache.ts";
import { fakeHook } from "../_helpers.ts";
import { corpus, LIMITS } from "../runtime-wasm/_corpus.ts";

const bytes = await corpus("guard_wasi");
const load = preparedFromDiskCache(Deno.args[0]!, () => Promise.resolve(bytes));
const hook = () =>
  fakeHook({ name: "guard" }, { entry: { runtime: "wasm", format: "wasm", path: "/x/g.wasm" } });
const refs: WeakRef<object>[] = [];
for (let i = 0; i < 2; i++) refs.push(new WeakRef(await load(hook(), LIMITS, "fresh")));
// Collected across turns of the event loop (a WeakRef's target stays for the turn it was read in).
for (let i = 0; i < 3; i++) {
  await new Promise((resolve) => setTimeout(resolve, 0));
  (globalThis as { gc?: () => void }).gc!();
}
console.log(JSON.stringify({ alive: refs.map((r) => r.deref() !== undefined) }));
