/**
 * How long one audit group commit holds the event-loop thread on the
 * embedded store, with SQLite's automatic WAL checkpoints on the serving
 * connection (`checkpointMs: 0`) and with the checkpointer thread (the
 * default). Each store gets the same stream of commits (23 rows each, the
 * load test's average group); rounds alternate between the two so they share
 * the machine's noise. Prints p50/p99/max per commit, the total, and the
 * WAL file's largest size. A store's first commit, which starts the thread,
 * is not timed. `--back-to-back` commits again as soon as the WAL's size is
 * read (no timer turn in between): a stream during which the thread never
 * finds the log copied through at the start of a commit, so the log does not
 * restart on its own.
 *
 *   deno run -A scripts/bench_store.ts [--commits 900] [--rows 23] [--rounds 3] [--back-to-back]
 *
 * @module
 */
import { parseArgs } from "node:util";
import type { AuditRow } from "../packages/store/store.ts";
import { openSqliteStore } from "../packages/store-sqlite/sqlite.ts";
import { percentile } from "./_stats.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    commits: { type: "string", default: "900" },
    rows: { type: "string", default: "23" },
    rounds: { type: "string", default: "3" },
    "back-to-back": { type: "boolean", default: false },
  },
});
const COMMITS = Number(values.commits);
const ROWS = Number(values.rows);
const ROUNDS = Number(values.rounds);
const BACK_TO_BACK = values["back-to-back"];

const hooks = ["a", "b", "c"].map((name) => ({
  name,
  level: "tenant" as const,
  version: 1,
  sha256: name.repeat(64),
  outcome: "allow" as const,
  duration_ms: 0.05,
  fuel: 1234,
  detail: null,
}));
let serial = 0;
const row = (): AuditRow => ({
  decision_id: `dec_bench_${serial++}`,
  tenant_id: `tenant-${serial % 4}`,
  at: new Date().toISOString(),
  session_id: "s-1",
  event_type: "pre_tool_call",
  decision: "allow",
  reason: null,
  blocked_by: null,
  dry_run: false,
  hooks,
});

/** Milliseconds each commit took, and the WAL's largest size after one. */
async function run(checkpointMs: number): Promise<{ times: number[]; walBytes: number }> {
  const dir = await Deno.makeTempDir({ prefix: "hookbox-bench-store-" });
  const path = `${dir}/hookbox.db`;
  const store = openSqliteStore(path, { checkpointMs });
  await store.migrate();
  // The first commit starts the checkpointer thread (~20 ms, once per store): not timed.
  await store.appendAudit([row()]);
  const times: number[] = [];
  let walBytes = 0;
  for (let i = 0; i < COMMITS; i++) {
    const batch = Array.from({ length: ROWS }, row);
    const t0 = performance.now();
    await store.appendAudit(batch);
    times.push(performance.now() - t0);
    // The stat is I/O: the loop turns (messages from the checkpointer thread come in).
    walBytes = Math.max(walBytes, (await Deno.stat(`${path}-wal`)).size);
    // Let the loop turn, as the server's does between commits.
    if (!BACK_TO_BACK) await new Promise((resolve) => setTimeout(resolve, 0));
  }
  await store.close();
  await Deno.remove(dir, { recursive: true });
  return { times, walBytes };
}

const modes = [["automatic checkpoints", 0], ["checkpointer thread", 250]] as const;
const all = new Map<string, number[]>(modes.map(([name]) => [name, []]));
const wal = new Map<string, number>();
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, ms] of modes) {
    const { times, walBytes } = await run(ms);
    all.get(name)!.push(...times);
    wal.set(name, Math.max(wal.get(name) ?? 0, walBytes));
  }
}
console.log(
  `${ROUNDS} rounds × ${COMMITS} commits × ${ROWS} audit rows, SQLite WAL, synchronous=NORMAL${
    BACK_TO_BACK ? ", back to back" : ""
  }`,
);
const summary = new Map<string, { p99: number; max: number; total: number }>();
for (const [name, times] of all) {
  const sorted = [...times].sort((a, b) => a - b);
  const total = times.reduce((s, t) => s + t, 0) / ROUNDS;
  summary.set(name, { p99: percentile(sorted, 0.99), max: sorted.at(-1)!, total });
  console.log(
    `${name.padEnd(22)} p50 ${percentile(sorted, 0.5).toFixed(3)} ms  p99 ${
      percentile(sorted, 0.99).toFixed(3)
    } ms` +
      `  max ${sorted.at(-1)!.toFixed(2)} ms  per round ${total.toFixed(0)} ms` +
      `  largest WAL ${(wal.get(name)! / 1048576).toFixed(1)} MiB`,
  );
}
const a = summary.get(modes[0][0])!;
const b = summary.get(modes[1][0])!;
console.log(
  `ratio automatic / thread: p99 ${(a.p99 / b.p99).toFixed(1)}×, max ${
    (a.max / b.max).toFixed(1)
  }×, ` +
    `time on the thread ${(a.total / b.total).toFixed(2)}×`,
);
