/**
 * Two commits' edge Workers side by side: one store of N tenants' warm JS
 * hooks (`tenantStore`) bundled by this checkout and by another (`--base`,
 * e.g. `git worktree add /tmp/base <commit>`, its `node_modules` linked),
 * each bundle served by its own workerd, requests to the two interleaved.
 * Reports, for calls round-robin over every tenant (after a first round
 * that inflates every image) and for one tenant's warm hook, each side's
 * p50 and the median of the per-request differences (this checkout minus
 * the base): the machine's swings, which move a run by more than a change
 * does, fall on both sides alike.
 *
 *   deno run -A scripts/bench_edge_pair.ts --base DIR [--tenants 1000] [--rounds 2]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { toolEvent } from "../tests/service/_api.ts";
import { startWorkerd } from "../tests/_workerd.ts";
import { RawHttpConnection } from "./_raw_http.ts";
import { median } from "./_stats.ts";
import { tenantStore } from "./_tenant_hooks.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    base: { type: "string" },
    tenants: { type: "string", default: "1000" },
    rounds: { type: "string", default: "2" },
    help: { type: "boolean", default: false },
  },
});
if (values.help || values.base === undefined) {
  console.log(
    "usage: deno run -A scripts/bench_edge_pair.ts --base DIR [--tenants N] [--rounds N]\n\n" +
      "DIR: a checkout of the commit to compare with (its hookbox CLI bundles the same store)",
  );
  Deno.exit(values.help ? 0 : 2);
}
const TENANTS = Number(values.tenants);
const ROUNDS = Number(values.rounds);

const dir = await Deno.makeTempDir({ prefix: "hookbox-bench-pair-" });
const { keys, h } = await tenantStore(dir, TENANTS);
await h.close();

/** Bundles the store with the hookbox CLI of checkout `root` into `out`. */
async function bundle(root: string, out: string): Promise<void> {
  const made = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      `${root}/packages/cli/main.ts`,
      "bundle",
      "--db",
      `sqlite:${dir}/hookbox.db`,
      "--out",
      out,
    ],
    cwd: root,
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!made.success) throw new Error(`bundle in ${root}: ${new TextDecoder().decode(made.stderr)}`);
}
const here = new URL("..", import.meta.url).pathname;
await bundle(values.base, `${dir}/base`);
await bundle(here, `${dir}/this`);

const base = await startWorkerd(`${dir}/base`, {}, { pollMs: 2 });
const mine = await startWorkerd(`${dir}/this`, {}, { pollMs: 2 });
const toBase = await RawHttpConnection.open(base.url);
const toMine = await RawHttpConnection.open(mine.url);
const bodies = keys.map((_, i) => JSON.stringify(toolEvent("ls -la", { session_id: `s${i}` })));
async function call(conn: RawHttpConnection, i: number): Promise<number> {
  const headers = { authorization: `Bearer ${keys[i]}`, "content-type": "application/json" };
  const t0 = performance.now();
  const answer = await conn.request("POST", "/v1/events", headers, bodies[i]!);
  if (answer.status !== 200) throw new Error(`tenant ${i}: status ${answer.status}`);
  return performance.now() - t0;
}
/** One call on each side, in an order that alternates; the two times. */
async function pair(i: number, flip: boolean): Promise<[number, number]> {
  if (flip) {
    const b = await call(toBase, i);
    return [b, await call(toMine, i)];
  }
  const m = await call(toMine, i);
  return [await call(toBase, i), m];
}
function report(what: string, times: [number, number][]) {
  const b = median(times.map(([x]) => x));
  const m = median(times.map(([, y]) => y));
  const d = median(times.map(([x, y]) => y - x));
  console.log(
    `${what}: base p50 ${b.toFixed(3)} ms, this ${m.toFixed(3)} ms; ` +
      `median difference ${d >= 0 ? "+" : ""}${d.toFixed(3)} ms (${
        (m / b).toFixed(2)
      }×, ${times.length} pairs)`,
  );
}
try {
  for (let i = 0; i < TENANTS; i++) await pair(i, i % 2 === 0); // every image inflated
  const churn: [number, number][] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < TENANTS; i++) churn.push(await pair(i, (i + round) % 2 === 0));
  }
  const warm: [number, number][] = [];
  for (let i = 0; i < 4000; i++) warm.push(await pair(0, i % 2 === 0));
  console.log(`hookbox in workerd, ${TENANTS} tenants × 1 warm JS hook; base: ${values.base}`);
  report(`round-robin over ${TENANTS} tenants`, churn);
  report("one tenant's warm hook", warm.slice(200));
} finally {
  toBase.close();
  toMine.close();
  await base.stop();
  await mine.stop();
  await Deno.remove(dir, { recursive: true });
}
