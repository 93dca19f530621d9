/**
 * The decision log as a webhook: batches of JSON lines to a collector, kept
 * and retried while it fails, bounded, and every loss said.
 */
import assert from "node:assert/strict";
import { decisionWebhook } from "../../packages/deno/serve/decision_webhook.ts";

/** A collector on 127.0.0.1 answering `status(n)` to its n-th request (from 0). */
function collector(status: (n: number) => number) {
  const bodies: string[] = [];
  const auth: (string | null)[] = [];
  let n = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const text = await req.text();
    const code = status(n++);
    if (code === 200) bodies.push(text);
    auth.push(req.headers.get("authorization"));
    return new Response(null, { status: code });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/decisions`,
    bodies,
    auth,
    requests: () => n,
    lines: () => bodies.flatMap((b) => b.trim().split("\n")).map((l) => JSON.parse(l).id),
    close: () => server.shutdown(),
  };
}

Deno.test("a decision-log webhook posts JSON lines in batches, with its token", async () => {
  const c = collector(() => 200);
  const said: string[] = [];
  const sink = decisionWebhook(c.url, {
    token: "secret-token",
    batch: 3,
    flushMs: 20,
    report: (m) => said.push(m),
  });
  try {
    for (let id = 0; id < 7; id++) sink.write({ id });
    await sink.close(5000);
    assert.deepEqual(c.lines(), [0, 1, 2, 3, 4, 5, 6], "every entry, in order");
    assert.ok(c.bodies.length >= 3, "batches of at most 3");
    assert.ok(c.bodies.every((b) => b.trim().split("\n").length <= 3));
    assert.deepEqual([...new Set(c.auth)], ["Bearer secret-token"]);
    assert.deepEqual(said, []);
  } finally {
    await c.close();
  }
});

Deno.test("a failing collector: entries are kept and retried, then delivered once it answers", async () => {
  const c = collector((n) => n < 2 ? 503 : 200);
  const said: string[] = [];
  const sink = decisionWebhook(c.url, {
    batch: 10,
    flushMs: 10,
    retryMs: 20,
    report: (m) => said.push(m),
  });
  try {
    for (let id = 0; id < 4; id++) sink.write({ id });
    await sink.close(5000);
    assert.deepEqual(c.lines(), [0, 1, 2, 3]);
    assert.ok(c.requests() >= 3);
    assert.ok(said.some((m) => m.includes("the collector answered 503; retrying")), said.join());
  } finally {
    await c.close();
  }
});

Deno.test("past its queue the oldest entries are dropped, counted and said; what is left is named at close", async () => {
  const c = collector(() => 500);
  const said: string[] = [];
  const sink = decisionWebhook(c.url, {
    batch: 100,
    flushMs: 10,
    retryMs: 10,
    queue: 5,
    report: (m) => said.push(m),
  });
  try {
    for (let id = 0; id < 12; id++) sink.write({ id });
    assert.equal(sink.dropped, 7);
    await sink.close(300);
    assert.deepEqual(c.lines(), [], "the collector took nothing");
    assert.ok(
      said.some((m) => m === `5 entries not delivered to ${c.url} at shutdown`),
      said.join("\n"),
    );
    assert.ok(
      said.some((m) => m === `7 entries dropped: 5 were waiting for ${c.url} already`),
      said.join("\n"),
    );
  } finally {
    await c.close();
  }
});

Deno.test("a collector that cannot be reached never throws into the writer", async () => {
  const said: string[] = [];
  // A port nothing listens on (bound, then closed).
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (probe.addr as Deno.NetAddr).port;
  probe.close();
  const sink = decisionWebhook(`http://127.0.0.1:${port}/`, {
    flushMs: 10,
    retryMs: 10,
    report: (m) => said.push(m),
  });
  sink.write({ id: 1 });
  await sink.close(200);
  assert.ok(said.some((m) => m.includes("retrying")), said.join("\n"));
  assert.ok(said.some((m) => m.includes("1 entries not delivered")), said.join("\n"));
});
