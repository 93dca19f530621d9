/**
 * The service's kept workers (packages/deno/serve/worker_pool.ts): a worker
 * serves one job after another, a job never waits for another's, a worker
 * whose job overran is ended rather than handed the next job, and workers past
 * their input budget or the pool's size are ended.
 */
import assert from "node:assert/strict";
import { WorkerPool } from "../../packages/deno/serve/worker_pool.ts";

/** Echoes each message; "hang" spins for ever. */
const ECHO = `data:text/javascript,${
  encodeURIComponent(
    'self.onmessage = (e) => { if (e.data === "hang") for (;;) {} self.postMessage(e.data); };',
  )
}`;

const pool = (size = 1, recycleBytes = 1 << 30) =>
  new WorkerPool<string, string>(ECHO, { size, recycleBytes, idleMs: 60_000 });

Deno.test("WorkerPool: one worker answers job after job", async () => {
  const p = pool();
  for (const job of ["a", "b", "c"]) {
    assert.deepEqual(await p.run(job, 1, 10_000), { ok: true, answer: job });
  }
  assert.equal(p.started, 1);
  p.close();
});

Deno.test("WorkerPool: a worker whose job overran is ended, never handed the next job", async () => {
  const p = pool();
  assert.deepEqual(await p.run("hang", 1, 50), { ok: false, failure: { kind: "timeout" } });
  // Kept, the spinning worker would never answer this one.
  assert.deepEqual(await p.run("next", 1, 10_000), { ok: true, answer: "next" });
  assert.equal(p.started, 2);
  p.close();
});

Deno.test("WorkerPool: jobs at once each get a worker; only `size` are kept", async () => {
  const p = pool(2);
  const answers = await Promise.all(["a", "b", "c"].map((job) => p.run(job, 1, 10_000)));
  assert.deepEqual(answers.map((a) => a.ok && a.answer), ["a", "b", "c"]);
  assert.equal(p.started, 3);
  await p.run("d", 1, 10_000);
  await p.run("e", 1, 10_000);
  assert.equal(p.started, 3, "the two kept serve the next jobs");
  p.close();
});

Deno.test("WorkerPool: a worker past its input budget is ended after its job", async () => {
  const p = pool(1, 100);
  await p.run("a", 60, 10_000);
  assert.equal(p.started, 1);
  await p.run("b", 60, 10_000); // 120 bytes: ended once answered
  await p.run("c", 60, 10_000);
  assert.equal(p.started, 2);
  p.close();
});
