/**
 * In the Deno server a tenant's matchers take at most
 * `INLINE_MATCHER_STEPS` of the thread that answers every tenant; the ones
 * that need more are decided on the event codec's worker, on the rest of the
 * event's budget, with the answers the request thread would have given.
 */
import assert from "node:assert/strict";
import { createEventCodec } from "../../packages/deno/serve/event_codec.ts";
import type { MatcherJob } from "../../packages/core/dispatch/select.ts";
import { MATCHER_STEPS_PER_EVENT } from "../../packages/core/schema/matcher.ts";
import { INLINE_MATCHER_STEPS } from "../../packages/service/engine.ts";
import { openSqliteStore } from "../../packages/store-sqlite/sqlite.ts";
import { harness, toolEvent, wasmFolder } from "./_api.ts";

/** A tenant with matched hooks (`hooks` by default), on a harness whose engine decides costly matchers apart. */
async function tenantWithMatchers(
  apart: (job: MatcherJob) => Promise<boolean[] | null>,
  patterns: Record<string, string> = hooks,
) {
  const h = await harness(openSqliteStore(":memory:"), undefined, 0, undefined, {
    matchApart: (_tenant, job) => apart(job),
  });
  const key = await h.tenant("t");
  for (const [name, pattern] of Object.entries(patterns)) {
    const up = await h.call("PUT", `/v1/hooks/${name}`, {
      key,
      body: await wasmFolder(name, "guard_wasi", `matcher:\n  pattern: '${pattern}'\n`),
    });
    assert.equal(up.status, 201, JSON.stringify(up.body));
  }
  const ran = async (command: string) => {
    const answer = await h.call("POST", "/v1/events", { key, body: toolEvent(command) });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    return (answer.body.hooks as { name: string }[]).map((r) => r.name).sort();
  };
  return { h, ran };
}

/** The tenant's hooks' patterns. */
const hooks = {
  // Defeats RE2's DFA: no budget answers it on a long event, so its hook runs.
  costly: "\\pL{0,500}a[ab]{25}[^ab]",
  // A plain scan: answered on a short event at once, on a long one past the inline steps.
  scan: "[xz]{3}[yw]",
  // Matches every Bash command.
  bash: '"command":',
};

Deno.test("a tenant's matchers that cost more than the inline steps are decided on the codec's worker", async () => {
  const codec = createEventCodec();
  const jobs: MatcherJob[] = [];
  const { scan, bash } = hooks;
  const { h, ran } = await tenantWithMatchers((job) => {
    jobs.push(job);
    return codec.match("t", job);
  }, { scan, bash });
  try {
    // The first event compiles one new matcher in place and leaves the other to the worker.
    assert.deepEqual(await ran("ab".repeat(10)), ["bash"]);
    jobs.length = 0;
    // Short, compiled: answered in place.
    assert.deepEqual(await ran("ab".repeat(10)), ["bash"]);
    assert.deepEqual(await ran("xxxy"), ["bash", "scan"]);
    assert.equal(jobs.length, 0);
    // 200 KB: the scan needs more than the inline steps; the worker says it does not match.
    assert.deepEqual(await ran("ab".repeat(100_000)), ["bash"]);
    assert.equal(jobs.length, 1);
    const [job] = jobs;
    assert.deepEqual(job!.matchers, [{ pattern: scan }]);
    assert.ok(job!.steps <= MATCHER_STEPS_PER_EVENT, `${job!.steps} steps`);
    assert.ok(job!.steps >= MATCHER_STEPS_PER_EVENT - INLINE_MATCHER_STEPS, `${job!.steps} steps`);
    assert.equal(job!.subject, JSON.stringify({ command: "ab".repeat(100_000) }));
    // And that it does, where it does.
    assert.deepEqual(await ran(`${"ab".repeat(100_000)}xxxy`), ["bash", "scan"]);
  } finally {
    codec.close();
    await h.close();
  }
});

Deno.test("a pattern no budget answers is cut on the worker: its hook runs and sees the event", async () => {
  const codec = createEventCodec();
  const { h, ran } = await tenantWithMatchers((job) => codec.match("t", job));
  try {
    assert.deepEqual(await ran("ab".repeat(100_000)), ["bash", "costly", "scan"]);
    assert.deepEqual(await ran("ls"), ["bash"]);
  } finally {
    codec.close();
    await h.close();
  }
});

Deno.test("a matcher the worker could not decide counts as matching: its hook runs", async () => {
  const { scan, bash } = hooks;
  const { h, ran } = await tenantWithMatchers(() => Promise.resolve(null), { scan, bash });
  try {
    assert.deepEqual(await ran("ab".repeat(100_000)), ["bash", "scan"]);
    assert.deepEqual(await ran("ls"), ["bash"]);
  } finally {
    await h.close();
  }
});
