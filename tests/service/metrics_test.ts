/**
 * Service metrics: hook outcomes and limit hits are counted per tenant and
 * hook, however many hooks an event ran; HTTP requests by declared route and
 * status; and the process's own figures.
 */
import assert from "node:assert/strict";
import type { DispatchResult } from "../../packages/core/dispatch/result.ts";
import { MAX_SERIES, MAX_TENANT_SERIES, Metrics, OTHER } from "../../packages/service/metrics.ts";
import { openSqliteStore } from "../../packages/store-sqlite/sqlite.ts";
import { harness, toolEvent } from "./_api.ts";
import { tempDir } from "../_helpers.ts";

/** The value of the series `line` (a regular expression) in `text`. */
const valueIn = (text: string, line: string) =>
  Number(new RegExp(`^${line} (\\d+(?:\\.\\d+)?(?:e[-+]?\\d+)?)$`, "m").exec(text)?.[1]);

Deno.test("each hook of an event counts once in its outcome, and limit hits by hook and code", async () => {
  const metrics = new Metrics({ processMetrics: false });
  const hook = (name: string, outcome: string, code: string | null) => ({ name, outcome, code });
  const result = {
    decision: "allow",
    hooks: [
      hook("a", "ok", null),
      hook("b", "ok", null),
      hook("c", "limit", "LIMIT_FUEL"),
      hook("d", "timeout", "TIMEOUT"),
      hook("e", "limit", "LIMIT_FUEL"),
    ],
  } as unknown as DispatchResult;
  metrics.dispatched("acme", result, 0.001, false);
  metrics.dispatched("acme", result, 0.001, false);
  const one = { decision: "allow", hooks: [hook("a", "ok", null)] } as unknown as DispatchResult;
  metrics.dispatched("other", one, 0.001, false);
  const text = await metrics.text();
  const value = (line: string) => valueIn(text, line);
  assert.equal(value('hookbox_hook_outcomes_total\\{tenant="acme",hook="a",outcome="ok"\\}'), 2);
  assert.equal(value('hookbox_hook_outcomes_total\\{tenant="acme",hook="c",outcome="limit"\\}'), 2);
  assert.equal(
    value('hookbox_hook_outcomes_total\\{tenant="acme",hook="d",outcome="timeout"\\}'),
    2,
  );
  assert.equal(value('hookbox_hook_outcomes_total\\{tenant="other",hook="a",outcome="ok"\\}'), 1);
  assert.equal(value('hookbox_limit_hits_total\\{tenant="acme",hook="c",code="LIMIT_FUEL"\\}'), 2);
  assert.equal(value('hookbox_limit_hits_total\\{tenant="acme",hook="e",code="LIMIT_FUEL"\\}'), 2);
  assert.equal(value('hookbox_limit_hits_total\\{tenant="acme",hook="d",code="TIMEOUT"\\}'), 2);
  assert.doesNotMatch(text, /process_cpu/, "no process metrics when asked for none");
});

Deno.test("a tenant renaming its hooks cannot grow the metrics without end: past the cap, series count as _other", async () => {
  const metrics = new Metrics({ processMetrics: false });
  const calls = MAX_SERIES + 500;
  for (let i = 0; i < calls; i++) {
    const result = {
      decision: "allow",
      hooks: [{ name: `h${i}`, outcome: "ok", code: null }],
    } as unknown as DispatchResult;
    metrics.dispatched(`t${i}`, result, 0.001, false);
  }
  const text = await metrics.text();
  const series = (name: string) => text.split("\n").filter((l) => l.startsWith(`${name}{`));
  const outcomes = series("hookbox_hook_outcomes_total");
  assert.ok(outcomes.length <= MAX_SERIES + 1, `${outcomes.length} series`);
  // Nothing is lost: the calls past the cap are counted under _other.
  assert.equal(
    outcomes.reduce((n, l) => n + Number(l.split(" ").at(-1)), 0),
    calls,
  );
  assert.equal(
    valueIn(
      text,
      `hookbox_hook_outcomes_total\\{tenant="${OTHER}",hook="${OTHER}",outcome="ok"\\}`,
    ),
    500,
  );
  assert.ok(series("hookbox_dispatches_total").length <= MAX_SERIES + 2);
  assert.ok(series("hookbox_decision_seconds_count").length <= MAX_SERIES + 1);
});

Deno.test("one tenant naming hooks without end keeps to its own share: another tenant's series stay its own", async () => {
  const metrics = new Metrics({ processMetrics: false });
  const run = (tenant: string, hook: string, outcome = "ok") =>
    metrics.dispatched(
      tenant,
      {
        decision: "allow",
        hooks: [{ name: hook, outcome, code: null }],
      } as unknown as DispatchResult,
      0.001,
      false,
    );
  // More names than the whole metric may have: alone, they would push every later series to _other.
  const calls = MAX_SERIES + 300;
  for (let i = 0; i < calls; i++) run("noisy", `h${i}`);
  run("quiet", "guard");
  run("quiet", "guard", "error");
  const text = await metrics.text();
  const outcomes = text.split("\n").filter((l) => l.startsWith("hookbox_hook_outcomes_total{"));
  const noisy = outcomes.filter((l) => l.includes('tenant="noisy"'));
  assert.equal(noisy.length, MAX_TENANT_SERIES + 1);
  assert.equal(
    valueIn(text, `hookbox_hook_outcomes_total\\{tenant="noisy",hook="${OTHER}",outcome="ok"\\}`),
    calls - MAX_TENANT_SERIES,
  );
  assert.equal(
    valueIn(text, 'hookbox_hook_outcomes_total\\{tenant="quiet",hook="guard",outcome="ok"\\}'),
    1,
  );
  assert.equal(
    valueIn(text, 'hookbox_hook_outcomes_total\\{tenant="quiet",hook="guard",outcome="error"\\}'),
    1,
  );
  // Nothing is lost: every call is counted somewhere.
  assert.equal(noisy.reduce((n, l) => n + Number(l.split(" ").at(-1)), 0), calls);
});

Deno.test("requests with made-up methods share one series: a client cannot fill the request metric", async () => {
  const dir = await tempDir("hookbox-metrics-");
  const metrics = new Metrics({ processMetrics: false });
  const h = await harness(openSqliteStore(`${dir}/hookbox.db`), undefined, 0, undefined, {
    metrics,
  });
  try {
    for (let i = 0; i < 50; i++) await h.call(`X${i}`, "/v1/events");
    await h.call("GET", "/healthz");
    const text = (await h.call("GET", "/metrics")).body as string;
    const counts = text.split("\n").filter((l) =>
      l.startsWith("hookbox_http_request_seconds_count{")
    );
    assert.ok(!counts.some((l) => /method="X\d+"/.test(l)), counts.join("\n"));
    const other = counts.filter((l) => l.includes(`method="${OTHER}"`));
    assert.equal(other.reduce((n, l) => n + Number(l.split(" ").at(-1)), 0), 50);
    assert.equal(
      valueIn(
        text,
        'hookbox_http_request_seconds_count\\{method="GET",route="/healthz",status="200"\\}',
      ),
      1,
    );
  } finally {
    await h.close();
  }
});

Deno.test("GET /metrics: requests by declared route and status, and the process's own figures", async () => {
  const dir = await tempDir("hookbox-metrics-");
  const metrics = new Metrics();
  const h = await harness(openSqliteStore(`${dir}/hookbox.db`), undefined, 0, undefined, {
    metrics,
  });
  try {
    const key = await h.tenant("acme");
    await h.call("POST", "/v1/events", { key, body: toolEvent("ls") });
    await h.call("GET", "/v1/hooks/nope", { key });
    await h.call("GET", "/v1/hooks/also-nope", { key });
    const text = (await h.call("GET", "/metrics")).body as string;
    const count = (labels: string) =>
      valueIn(text, `hookbox_http_request_seconds_count\\{${labels}\\}`);
    assert.equal(count('method="POST",route="/v1/events",status="200"'), 1);
    // One series per route, whatever the path's parameters were.
    assert.equal(count('method="GET",route="/v1/hooks/\\{name\\}",status="404"'), 2);
    assert.doesNotMatch(text, /route="\/v1\/hooks\/nope"/);
    for (const name of ["process_cpu_seconds_total", "process_resident_memory_bytes"]) {
      assert.match(text, new RegExp(`^hookbox_${name} `, "m"), name);
    }
  } finally {
    await h.close();
  }
});
