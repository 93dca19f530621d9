/**
 * The per-event output and input budgets (`Policy.eventOutputKb`,
 * `Policy.eventInputKb`): what the hooks of one event print together, and
 * what they are handed together, are bounded as their fuel can be — a
 * thousand hooks each at its own output cap (or a thousand prompt hooks with
 * 64 KiB bodies) no longer make one event's answer hundreds of megabytes, and
 * a thousand hooks on a 1 MiB event no longer cost the host 5 s of
 * serialising. And what hooks print is folded in linear time.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { resolvePolicy } from "../../../packages/core/policy.ts";
import { fakeHook } from "../../_helpers.ts";
import { run } from "./_run.ts";

const EVENT = {
  event_type: "pre-tool-call",
  session_id: "s",
  tool_name: "Bash",
  tool_input: { command: "ls" },
};

Deno.test("the hooks of one event share its output budget; past it they end as limit/output", async () => {
  const hooks = ["a", "b", "c", "d", "e"].map((name, i) =>
    fakeHook({ name, priority: 100 - i, on_error: name === "e" ? "closed" : "open" })
  );
  const print = () => ({ exitCode: 0, stdout: "x".repeat(300 * 1024), stderr: "" });
  const { result } = await run(
    hooks,
    EVENT,
    Object.fromEntries(hooks.map((h) => [h.name, print])),
    { eventOutputKb: 1024 },
  );
  assertEquals(result.hooks.map((h) => h.code), [
    null,
    null,
    null,
    "LIMIT_OUTPUT",
    "LIMIT_OUTPUT",
  ]);
  const printed = result.hooks.reduce((n, h) => n + h.stdout.length + h.stderr.length, 0);
  ok(printed <= 1024 * 1024, `printed ${printed}`);
  // The budget ends a hook like any limit: on_error closed blocks.
  assertEquals([result.decision, result.blocked_by], ["block", "e"]);
});

Deno.test("once the event's output budget is spent the next hooks do not run", async () => {
  const hooks = ["a", "b", "c"].map((name, i) => fakeHook({ name, priority: 100 - i }));
  const print = () => ({ exitCode: 0, stdout: "x".repeat(512 * 1024), stderr: "" });
  const { result, called } = await run(
    hooks,
    EVENT,
    Object.fromEntries(hooks.map((h) => [h.name, print])),
    { eventOutputKb: 1024 },
  );
  assertEquals(called, ["a", "b"]);
  assertEquals(result.hooks[2]?.detail, "output: the event's output budget is spent");
});

Deno.test("prompt hooks are held to their output cap and to the event's budget", async () => {
  const body = "p".repeat(60 * 1024);
  const prompt = (name: string, extra: Record<string, unknown> = {}) =>
    fakeHook({ name, inject: { role: "system" }, ...extra }, {
      entry: { runtime: "prompt" },
      body,
    });
  const own = await run([prompt("small", { limits: { output_kb: 16 } })], EVENT);
  assertEquals(own.result.hooks[0]?.code, "LIMIT_OUTPUT");
  assertEquals(own.result.inject, []);

  const many = Array.from({ length: 40 }, (_, i) => prompt(`p${String(i).padStart(2, "0")}`));
  const { result } = await run(many, EVENT, {}, { eventOutputKb: 1024 });
  const injected = result.inject.length;
  ok(injected >= 15 && injected <= 17, `${injected} bodies fit in 1 MiB`);
  assertEquals(result.hooks.filter((h) => h.outcome === "ok").length, injected);
  ok(
    result.hooks.slice(injected).every((h) => h.code === "LIMIT_OUTPUT"),
    JSON.stringify(result.hooks.map((h) => h.code)),
  );
  ok(JSON.stringify(result).length < 2.2 * 1024 * 1024, "the answer stays near the budget");
});

Deno.test("the default output budget is 4 MiB and a bad one is refused", () => {
  assertEquals(resolvePolicy({}).eventOutputKb, 4096);
  for (const bad of [0, -1, Number.NaN]) {
    let refused = false;
    try {
      resolvePolicy({ eventOutputKb: bad });
    } catch (err) {
      refused = err instanceof TypeError && String(err).includes("policy.eventOutputKb");
    }
    ok(refused, `eventOutputKb ${bad} accepted`);
  }
});

Deno.test("a hook printing 200,000 tool names is folded in linear time, toggles kept", async () => {
  const names = Array.from({ length: 200_000 }, (_, i) => `tool_${i}`);
  const { result } = await run(
    [
      fakeHook({ name: "many", priority: 2, limits: { output_kb: 4096 } }),
      fakeHook({ name: "flip", priority: 1 }),
    ],
    EVENT,
    {
      many: () => ({
        exitCode: 0,
        stdout: JSON.stringify({ disable_tools: [...names, "tool_1"], inject: [] }),
        stderr: "",
      }),
      flip: () => ({
        exitCode: 0,
        stdout: JSON.stringify({ enable_tools: ["tool_0"], disable_tools: ["extra"] }),
        stderr: "",
      }),
    },
  );
  assertEquals(result.disable_tools.length, 200_000, "tool_0 moved out, extra in, no duplicate");
  assertEquals(result.disable_tools.at(-1), "extra");
  assertEquals(result.enable_tools, ["tool_0"]);
});

Deno.test("the hooks of one event share its input budget; past it they do not run", async () => {
  const hooks = Array.from(
    { length: 10 },
    (_, i) => fakeHook({ name: `h${i}`, priority: 100 - i }),
  );
  const big = { ...EVENT, tool_input: { command: "y".repeat(100 * 1024) } };
  const { result, called } = await run(hooks, big, {}, { eventInputKb: 350 });
  assertEquals(called, ["h0", "h1", "h2"]);
  assertEquals(
    result.hooks.slice(3).map((h) => h.detail),
    Array(7).fill("input: the event's input budget is spent"),
  );
});

Deno.test("async hooks draw on the same input budget as the chain", async () => {
  const hooks = [
    ...["a1", "a2", "a3"].map((name) => fakeHook({ name, async: true })),
    ...["s1", "s2"].map((name, i) => fakeHook({ name, priority: 10 - i })),
  ];
  const big = { ...EVENT, tool_input: { command: "y".repeat(100 * 1024) } };
  const { result, asyncResults, called } = await run(hooks, big, {}, { eventInputKb: 250 });
  // Async hooks start first: two fit, the third and both synchronous ones do not.
  assertEquals(called.sort(), ["a1", "a2"]);
  assertEquals(asyncResults.map((r) => r.record.code).sort(), [null, null, "LIMIT_INPUT"].sort());
  assertEquals(result.hooks.filter((h) => !h.name.startsWith("a")).map((h) => h.code), [
    "LIMIT_INPUT",
    "LIMIT_INPUT",
  ]);
});

Deno.test("the default input budget is 16 MiB and a bad one is refused", () => {
  assertEquals(resolvePolicy({}).eventInputKb, 16384);
  let refused = false;
  try {
    resolvePolicy({ eventInputKb: 0 });
  } catch (err) {
    refused = err instanceof TypeError && String(err).includes("policy.eventInputKb");
  }
  ok(refused);
});
