/**
 * The per-event CPU budget (`Policy.eventFuel`): the synchronous hooks of one
 * event share one fuel budget — each gets at most what the hooks before it
 * left, and once it is spent the rest end as `limit`/`LIMIT_FUEL` without
 * running, `on_error` applied. In-process and with the chain on a worker.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { dispatchEvent } from "../../../packages/core/dispatch/dispatch.ts";
import { resolvePolicy } from "../../../packages/core/policy.ts";
import { corpusRuntime } from "../../runtime-wasm/_corpus.ts";
import { loopHook, LS_EVENT } from "./_run.ts";

const OWN_FUEL = 5_000_000;
const EVENT_FUEL = 8_000_000;

const spin = (name: string, extra: Record<string, unknown> = {}) =>
  loopHook({ name, priority: 100 - name.length, limits: { fuel: OWN_FUEL }, ...extra });
const event = LS_EVENT;

for (const workers of [0, 1]) {
  const mode = workers ? "on a worker" : "in-process";
  Deno.test(`the hooks of one event share its fuel budget (${mode})`, async () => {
    const runtime = corpusRuntime({}, workers ? { worker: true, workers } : {});
    try {
      const hooks = [spin("a"), spin("bb"), spin("ccc", { on_error: "closed" })];
      const result = await dispatchEvent(hooks, event, {
        runtimes: { wasm: runtime },
        policy: resolvePolicy({ eventFuel: EVENT_FUEL }),
        tenantId: "t",
        env: {},
      });
      const [a, b, c] = result.hooks;
      // The first burns its own 5 million, the second what is left (3 million), the third nothing.
      assertEquals([a?.code, b?.code, c?.code], ["LIMIT_FUEL", "LIMIT_FUEL", "LIMIT_FUEL"]);
      ok(a!.fuel >= OWN_FUEL && a!.fuel < OWN_FUEL * 1.05, `a used ${a!.fuel}`);
      ok(b!.fuel >= EVENT_FUEL - a!.fuel && b!.fuel < 3_200_000, `b used ${b!.fuel}`);
      assertEquals([c!.fuel, c!.detail], [0, "fuel: the event's fuel budget is spent"]);
      ok(a!.fuel + b!.fuel < EVENT_FUEL * 1.03, "the chain stays within its budget");
      // The budget ends the third like any limit: on_error closed blocks.
      assertEquals([result.decision, result.blocked_by], ["block", "ccc"]);

      // Without a budget each hook gets its own fuel.
      const free = await dispatchEvent(hooks.slice(0, 2), event, {
        runtimes: { wasm: runtime },
        policy: resolvePolicy({}),
        tenantId: "t",
        env: {},
      });
      ok(free.hooks.every((r) => r.fuel >= OWN_FUEL), JSON.stringify(free.hooks));
    } finally {
      await runtime.close?.();
    }
  });
}

Deno.test("a non-positive event budget is refused when the policy is resolved", () => {
  for (const bad of [0, -1, Number.NaN]) {
    try {
      resolvePolicy({ eventFuel: bad });
      ok(false, `eventFuel ${bad} accepted`);
    } catch (err) {
      ok(err instanceof TypeError && err.message.includes("policy.eventFuel"));
    }
  }
});
