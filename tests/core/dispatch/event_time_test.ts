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
import { fakeHook, fakeRuntime } from "../../_helpers.ts";
import { useTimer } from "../../../packages/core/timer.ts";
import { signalTimer } from "../../../packages/host-deno/signal_timer.ts";

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
      // The others never run; the closed one blocks, as for any timeout. (When the first ends
      // a moment before the deadline, the next one's plugin may still be loading when it passes.)
      for (const late of [second!, guard!]) {
        assertEquals([late.outcome, late.code, late.fuel], ["timeout", "TIMEOUT", 0]);
        ok(
          /^time: the event's time budget (is spent|ran out while the hook was being built)/
            .test(late.detail ?? ""),
          late.detail ?? "",
        );
      }
      assertEquals([result.decision, result.blocked_by], ["block", "guard"]);
    } finally {
      await runtime.close?.();
    }
  });
}

Deno.test("the event's deadline covers building: a hook still being built then ends as timeout", async () => {
  // A JS hook found in this call is built before it runs (its top level runs in the build);
  // this runtime's builds end only when the test says so.
  const runtime = fakeRuntime();
  const builds = new Map<string, () => void>();
  const prepare = (hook: { name: string }) =>
    hook.name === "built"
      ? Promise.resolve(null)
      : new Promise<null>((resolve) => builds.set(hook.name, () => resolve(null)));
  const hooks = [
    fakeHook({ name: "built", priority: 3 }),
    fakeHook({ name: "slow", priority: 2 }),
    fakeHook({ name: "guard", priority: 1, on_error: "closed" }),
  ];
  const result = await dispatchEvent(hooks, event, {
    runtimes: { wasm: { ...runtime, prepare } },
    policy: resolvePolicy({ eventTimeoutMs: EVENT_TIME_MS }),
    tenantId: "t",
    env: {},
  });
  // Before, the call waited for the build whatever the deadline (a build may take 10 s).
  assertEquals(runtime.calls.map((c) => c.hook), ["built"]);
  const [built, slow, guard] = result.hooks;
  assertEquals(built?.outcome, "ok");
  assertEquals([slow?.outcome, slow?.code], ["timeout", "TIMEOUT"]);
  ok(/being built; a later call uses the build/.test(slow!.detail ?? ""), slow!.detail ?? "");
  assertEquals([guard?.outcome, guard?.code], ["timeout", "TIMEOUT"]);
  assertEquals([result.decision, result.blocked_by], ["block", "guard"]);
  // The build ends after the answer; nothing waits on it, and nothing is left unhandled.
  for (const finish of builds.values()) finish();
});

Deno.test("the build deadline waits with the host's timer: the one-shot CLI's never loads Deno's Node timers", async () => {
  // Source: Deno 2's global setTimeout loads its Node timers the first time (4–8 ms of every
  // one-shot hook call, whose first hook is always still loading); the CLI installs signalTimer.
  const runtime = fakeRuntime();
  let finish = () => {};
  const prepare = () => new Promise<null>((resolve) => finish = () => resolve(null));
  const global = globalThis.setTimeout;
  useTimer(signalTimer);
  globalThis.setTimeout = (() => {
    throw new Error("the global setTimeout was used");
  }) as unknown as typeof setTimeout;
  try {
    const result = await dispatchEvent(
      [
        fakeHook({ name: "slow", priority: 2 }),
        fakeHook({ name: "guard", priority: 1, on_error: "closed" }),
      ],
      event,
      {
        runtimes: { wasm: { ...runtime, prepare } },
        policy: resolvePolicy({ eventTimeoutMs: 50 }),
        tenantId: "t",
        env: {},
      },
    );
    assertEquals(result.hooks.map((h) => [h.name, h.outcome]), [
      ["slow", "timeout"],
      ["guard", "timeout"],
    ]);
    assertEquals([result.decision, result.blocked_by], ["block", "guard"]);
  } finally {
    globalThis.setTimeout = global;
    useTimer(null);
    finish();
  }
});

Deno.test("signalTimer calls back once after its time, and not once cancelled", async () => {
  const calls: string[] = [];
  const cancel = signalTimer(1, () => calls.push("cancelled"));
  cancel();
  await new Promise<void>((resolve) => signalTimer(5, () => (calls.push("fired"), resolve())));
  // Past the cancelled timer's time too: it never calls back.
  await new Promise<void>((resolve) => signalTimer(5, resolve));
  assertEquals(calls, ["fired"]);
});

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
