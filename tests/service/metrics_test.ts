/**
 * Service metrics: hook outcomes and limit hits are counted per hook, by
 * tenant, however many hooks an event ran.
 */
import assert from "node:assert/strict";
import type { DispatchResult } from "../../packages/core/dispatch/result.ts";
import { Metrics } from "../../packages/service/metrics.ts";

Deno.test("each hook of an event counts once in its outcome, and limit hits by code", async () => {
  const metrics = new Metrics();
  const hook = (outcome: string, code: string | null) => ({ name: "h", outcome, code });
  const result = {
    decision: "allow",
    hooks: [
      hook("ok", null),
      hook("ok", null),
      hook("limit", "LIMIT_FUEL"),
      hook("timeout", "TIMEOUT"),
      hook("limit", "LIMIT_FUEL"),
    ],
  } as unknown as DispatchResult;
  metrics.dispatched("acme", result, 0.001, false);
  metrics.dispatched("acme", result, 0.001, false);
  const one = { decision: "allow", hooks: [hook("ok", null)] } as unknown as DispatchResult;
  metrics.dispatched("other", one, 0.001, false);
  const text = await metrics.text();
  const value = (line: string) => Number(new RegExp(`^${line} (\\d+)$`, "m").exec(text)?.[1]);
  assert.equal(value('hookbox_hook_outcomes_total\\{tenant="acme",outcome="ok"\\}'), 4);
  assert.equal(value('hookbox_hook_outcomes_total\\{tenant="acme",outcome="limit"\\}'), 4);
  assert.equal(value('hookbox_hook_outcomes_total\\{tenant="acme",outcome="timeout"\\}'), 2);
  assert.equal(value('hookbox_hook_outcomes_total\\{tenant="other",outcome="ok"\\}'), 1);
  assert.equal(value('hookbox_limit_hits_total\\{tenant="acme",code="LIMIT_FUEL"\\}'), 4);
  assert.equal(value('hookbox_limit_hits_total\\{tenant="acme",code="TIMEOUT"\\}'), 2);
});
