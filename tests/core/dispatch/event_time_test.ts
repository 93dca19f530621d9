/**
 * The per-event time budget (`Policy.eventTimeoutMs`): the synchronous hooks
 * of one event share one deadline — each hook's timeout is lowered to what is
 * left, and once it has passed the rest end as `timeout` without running,
 * `on_error` applied. An agent lets the action through once its hook call
 * times out, so a chain of hooks at their own limits must not outlast it.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { dispatchEvent } from "../../../packages/core/dispatch/dispatch.ts";
import { resolvePolicy } from "../../../packages/core/policy.ts";
import { loopHook, LS_EVENT } from "./_run.ts";
import { corpusRuntime } from "../../runtime-wasm/_corpus.ts";

const EVENT_TIME_MS = 300;

/** A hook that loops until stopped, with a long timeout and fuel for seconds. */
const spin = (name: string, priority: number, extra: Record<string, unknown> = {}) =>
  loopHook({ name, priority, timeout: 600_000, limits: { fuel: 10_000_000_000 }, ...extra });
const event = LS_EVENT;

for (const workers of [0, 1]) {
  const mode = workers ? "on a worker" : "in-process";
  Deno.test(`the hooks of one event share its deadline (${mode})`, async () => {
    const runtime = corpusRuntime({}, workers ? { worker: true, workers } : {});
    try {
      const hooks = [spin("first", 3), spin("second", 2), spin("guard", 1, { on_error: "closed" })];
      const result = await dispatchEvent(hooks, event, {
        runtimes: { wasm: runtime },
        policy: resolvePolicy({ eventTimeoutMs: EVENT_TIME_MS }),
        tenantId: "t",
        env: {},
      });
      const [first, second, guard] = result.hooks;
      // The first runs until the event's time is spent (its own timeout lowered to it; on a
      // loaded machine a cold worker may take the whole of it before the hook starts).
      assertEquals([first?.outcome, first?.code], ["timeout", "TIMEOUT"]);
      ok(first!.duration_ms < 5_000, `the first ran ${first!.duration_ms} ms, not its own 600 s`);
      // The others never run; the closed one blocks, as for any timeout.
      for (const late of [second!, guard!]) {
        assertEquals(
          [late.outcome, late.code, late.fuel, late.detail],
          ["timeout", "TIMEOUT", 0, "time: the event's time budget is spent"],
        );
      }
      assertEquals([result.decision, result.blocked_by], ["block", "guard"]);
    } finally {
      await runtime.close?.();
    }
  });
}

Deno.test("a policy's eventTimeoutMs must be a positive number", () => {
  for (const bad of [0, -1, Number.NaN, Infinity]) {
    let thrown: unknown = null;
    try {
      resolvePolicy({ eventTimeoutMs: bad });
    } catch (err) {
      thrown = err;
    }
    ok(thrown instanceof TypeError && /policy\.eventTimeoutMs/.test(thrown.message), String(bad));
  }
});
