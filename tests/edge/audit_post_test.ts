/**
 * The edge Worker's audit delivery (`hookbox bundle --audit-url`): rows go in
 * batches, a failed post keeps them for the next one, a full queue logs its
 * oldest rows instead of dropping them, a batch the service refuses as
 * malformed is logged rather than retried forever.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { createAuditPoster } from "../../packages/edge/audit_post.ts";
import type { AuditRow } from "../../packages/store/store.ts";

const row = (n: number): AuditRow => ({
  decision_id: `dec-${n}`,
  tenant_id: "acme",
  at: "2026-11-22T00:00:00.000Z",
  session_id: "s",
  event_type: "pre-tool-call",
  decision: "allow",
  reason: null,
  blocked_by: null,
  dry_run: false,
  hooks: [],
});
const rows = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => row(from + i));

/** A fake ingest route: answers `status()` (once `wait` settles) and records what it stored. */
function service(status: () => number, wait?: Promise<void>) {
  const stored: string[] = [];
  const posts: { key: string | null; count: number }[] = [];
  const fetch = async (request: Request) => {
    const body = await request.json() as { items: AuditRow[] };
    await wait;
    posts.push({ key: request.headers.get("authorization"), count: body.items.length });
    const code = status();
    if (code === 200) stored.push(...body.items.map((r) => r.decision_id));
    return new Response(code === 200 ? "{}" : '{"error":{}}', { status: code });
  };
  return { stored, posts, fetch };
}

/** A poster on the fake service answering `status()`, logging into `lines`. */
function posterOn(
  status: () => number,
  options: { batch?: number; maxQueued?: number } = {},
  wait?: Promise<void>,
) {
  const svc = service(status, wait);
  const lines: string[] = [];
  const poster = createAuditPoster({
    url: "http://svc/v1/audit/ingest",
    key: "k",
    fetch: svc.fetch,
    log: (l) => lines.push(l),
    ...options,
  });
  return { svc, lines, poster };
}

Deno.test("audit rows are posted in batches with the admin key", async () => {
  const { svc, poster } = posterOn(() => 200, { batch: 4 });
  poster.push(rows(0, 10));
  await poster.drain();
  assertEquals(svc.posts, [
    { key: "Bearer k", count: 4 },
    { key: "Bearer k", count: 4 },
    { key: "Bearer k", count: 2 },
  ]);
  assertEquals(svc.stored, rows(0, 10).map((r) => r.decision_id));
  assertEquals(poster.queued, 0);
});

Deno.test("rows a post could not deliver go with the next one; none is lost or doubled", async () => {
  let down = true;
  const { svc, lines, poster } = posterOn(() => down ? 503 : 200);
  poster.push(rows(0, 3));
  await poster.drain();
  assertEquals([svc.stored.length, poster.queued], [0, 3]);
  ok(lines.some((l) => l.includes("audit_post_failed") && l.includes("HTTP 503")), lines.join());
  down = false;
  poster.push(rows(3, 5));
  // Two requests finishing at once share one delivery.
  await Promise.all([poster.drain(), poster.drain()]);
  assertEquals(svc.stored, rows(0, 5).map((r) => r.decision_id));
  assertEquals(poster.queued, 0);
});

Deno.test("a full queue writes its oldest rows to the log instead of dropping them", () => {
  const { lines, poster } = posterOn(() => 503, { maxQueued: 5 });
  poster.push(rows(0, 8));
  assertEquals(poster.queued, 5);
  const spilled = lines.map((l) => JSON.parse(l)).filter((l) => l.audit);
  assertEquals(spilled.map((l) => l.audit.decision_id), ["dec-0", "dec-1", "dec-2"]);
  ok(spilled.every((l) => /over 5 queued/.test(l.undelivered)));
});

Deno.test("a queue is bounded in bytes too: captured events of a megabyte go to the log", async () => {
  let status = 503;
  const { svc, lines, poster } = posterOn(() => status);
  // Forty rows each with a captured event of ~1 MiB: 40 MiB in an isolate of 128 MB.
  const captured = (n: number): AuditRow => ({ ...row(n), event: "e".repeat(1024 * 1024) });
  for (let i = 0; i < 40; i++) {
    poster.push([captured(i)]);
    await poster.drain();
  }
  // What stays is under 16 MiB of JSON: the newest 15 rows.
  assertEquals(poster.queued, 15);
  const spilled = lines.map((l) => JSON.parse(l)).filter((l) => l.audit);
  assertEquals(spilled.map((l) => l.audit.decision_id), rows(0, 25).map((r) => r.decision_id));
  ok(spilled.every((l) => l.undelivered === "over 16777216 bytes of queued rows"));
  assertEquals(spilled[0].audit.event.length, 1024 * 1024);
  status = 200;
  await poster.drain();
  assertEquals(svc.stored, rows(25, 40).map((r) => r.decision_id));
});

Deno.test("a full queue never logs a row on its way to the service, nor loses one", async () => {
  let answer!: () => void;
  const gate = new Promise<void>((resolve) => answer = resolve);
  const { svc, lines, poster } = posterOn(() => 200, { maxQueued: 5 }, gate);
  poster.push(rows(0, 5));
  const posting = poster.drain();
  // While rows 0–4 are posted, ten more come: the queue's five oldest (5–9) go to the log.
  poster.push(rows(5, 15));
  answer();
  await posting;
  await poster.drain();
  const spilled = lines.map((l) => JSON.parse(l)).filter((l) => l.audit);
  assertEquals(spilled.map((l) => l.audit.decision_id), rows(5, 10).map((r) => r.decision_id));
  assertEquals(svc.stored, [...rows(0, 5), ...rows(10, 15)].map((r) => r.decision_id));
  assertEquals(poster.queued, 0);
});

Deno.test("a batch the service refuses as malformed is logged, not retried forever", async () => {
  const { svc, lines, poster } = posterOn(() => 400);
  poster.push(rows(0, 2));
  await poster.drain();
  assertEquals(poster.queued, 0);
  // The batch, then each half (one row each): logged once each.
  assertEquals(svc.posts.map((p) => p.count), [2, 1, 1]);
  const spilled = lines.map((l) => JSON.parse(l)).filter((l) => l.audit);
  assertEquals(spilled.map((l) => l.audit.decision_id), ["dec-0", "dec-1"]);
});

/** A fake ingest route that refuses (400) any batch holding a row of `bad`, as the real one does. */
function refusing(bad: Set<string>, down: () => boolean = () => false) {
  const stored: string[] = [];
  const posts: number[] = [];
  const fetch = async (request: Request) => {
    const text = await request.text();
    posts.push(new TextEncoder().encode(text).byteLength);
    if (down()) return new Response("{}", { status: 503 });
    if (posts.at(-1)! > 8 * 1024 * 1024) return new Response("{}", { status: 413 });
    const items = (JSON.parse(text) as { items: AuditRow[] }).items;
    if (items.some((r) => bad.has(r.decision_id))) return new Response("{}", { status: 400 });
    stored.push(...items.map((r) => r.decision_id));
    return new Response("{}", { status: 200 });
  };
  return { stored, posts, fetch };
}

/** A poster on {@linkcode refusing}'s service, logging into `lines`; `spilled()` the rows it logged. */
function refusedPoster(bad: Set<string>, down?: () => boolean) {
  const svc = refusing(bad, down);
  const lines: string[] = [];
  const poster = createAuditPoster({
    url: "http://svc/i",
    key: "k",
    fetch: svc.fetch,
    log: (l) => lines.push(l),
  });
  const spilled = () => lines.map((l) => JSON.parse(l)).filter((l) => l.audit);
  return { svc, poster, spilled };
}

Deno.test("a row the service refuses costs the rows posted with it nothing: only it is logged", async () => {
  const { svc, poster, spilled } = refusedPoster(new Set(["dec-37", "dec-38", "dec-300"]));
  poster.push(rows(0, 400));
  await poster.drain();
  assertEquals(poster.queued, 0);
  assertEquals(svc.stored.length, 397);
  assertEquals(spilled().map((l) => l.audit.decision_id), ["dec-37", "dec-38", "dec-300"]);
  // Each refused row costs a post per halving, not one per row of the batch.
  ok(svc.posts.length <= 1 + 3 * 2 * Math.ceil(Math.log2(400)), `${svc.posts.length} posts`);
});

Deno.test("batches are bounded by bytes; a row too big for any post is logged alone", async () => {
  const { svc, poster, spilled } = refusedPoster(new Set());
  // ~200 KB rows (a tenant with a thousand hooks), CJK text: 3 bytes a character.
  const big = (n: number): AuditRow => ({ ...row(n), reason: "審".repeat(70_000) });
  const huge: AuditRow = { ...row(999), reason: "x".repeat(9 * 1024 * 1024) };
  poster.push([...Array.from({ length: 60 }, (_, i) => big(i)), huge, ...rows(100, 110)]);
  await poster.drain();
  assertEquals(poster.queued, 0);
  ok(svc.posts.every((b) => b <= 4 * 1024 * 1024 + 1024), `${svc.posts}`);
  assertEquals(svc.stored.length, 70);
  assertEquals(spilled().map((l) => l.audit.decision_id), ["dec-999"]);
  ok(/one row of \d+ bytes, past the \d+ a post may carry/.test(spilled()[0].undelivered));
});

Deno.test("a service gone while a refused batch is split keeps the rows not settled, once", async () => {
  let calls = 0;
  // Refuses the batch, takes the first half, then is gone.
  const { svc, poster, spilled } = refusedPoster(new Set(["dec-7"]), () => ++calls > 4);
  poster.push(rows(0, 16));
  await poster.drain();
  // 16 refused; 0–7 refused; 0–3 stored; 4–7 refused; then the service is gone.
  assertEquals(svc.stored, rows(0, 4).map((r) => r.decision_id));
  assertEquals(poster.queued, 12);
  calls = -100;
  await poster.drain();
  assertEquals(poster.queued, 0);
  assertEquals(svc.stored.length, 15);
  assertEquals(new Set(svc.stored).size, 15);
  assertEquals(spilled().map((l) => l.audit.decision_id), ["dec-7"]);
});

Deno.test("a network error keeps the rows", async () => {
  const poster = createAuditPoster({
    url: "http://svc/v1/audit/ingest",
    key: "k",
    fetch: () => Promise.reject(new TypeError("connection refused")),
    log: () => {},
  });
  poster.push(rows(0, 2));
  await poster.drain();
  assertEquals(poster.queued, 2);
});

Deno.test("a Worker given an audit URL but no admin key refuses requests, naming the missing secret", async () => {
  const { createEdgeWorker } = await import("../../packages/edge/worker.ts");
  const { emptyBundle } = await import("./_bundle.ts");
  const { data, modules } = await emptyBundle();
  const worker = createEdgeWorker(data, modules);
  const res = await worker.fetch(
    new Request("http://edge/healthz"),
    { HOOKBOX_AUDIT_URL: "https://svc/v1/audit/ingest" },
  );
  const body = await res.json();
  assertEquals([res.status, body.error.code], [500, "CONFIG_INVALID"]);
  ok(body.error.message.includes("HOOKBOX_AUDIT_KEY"));
  // Nothing half-built is kept: once the bindings are complete the Worker serves.
  const fine = await worker.fetch(new Request("http://edge/healthz"), {
    HOOKBOX_AUDIT_URL: "https://svc/v1/audit/ingest",
    HOOKBOX_AUDIT_KEY: "admin",
  });
  assertEquals(fine.status, 200);
  await fine.body?.cancel();
});
