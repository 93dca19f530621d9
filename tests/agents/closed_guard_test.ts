/**
 * `closedGuard` decides, for a payload hookbox cannot read, whether a closed
 * guard would have applied (then the agent gets a block). Its tool matcher
 * runs on the tool name read from the payload's first 64 KiB: on the thread
 * that answers the service's requests, and within the budget of an event's
 * matchers like any other.
 */
import assert from "node:assert/strict";
import { closedGuard } from "../../packages/agents/unreadable.ts";
import { MATCHER_STEPS_PER_EVENT } from "../../packages/core/schema/matcher.ts";
import { abText, fakeHook } from "../_helpers.ts";

Deno.test("a closed guard whose tool matcher the budget cannot answer is taken to apply", () => {
  // A pattern that defeats RE2's DFA: seconds of NFA on a 64 KiB name of a and b.
  const guard = fakeHook({
    name: "guard",
    on_error: "closed",
    matcher: { tool: "[a-z]{0,900}a[a-z]{30}[^a-z]" },
  });
  const tool = abText(64 * 1024);
  assert.equal(closedGuard([guard], "pre-tool-call", tool)?.name, "guard");
  // A matcher that answers still decides.
  const bash = fakeHook({ name: "bash", on_error: "closed", matcher: { tool: "^(Bash|Shell)$" } });
  assert.equal(closedGuard([bash], "pre-tool-call", tool), null);
  assert.equal(closedGuard([bash], "pre-tool-call", "Bash")?.name, "bash");
});

Deno.test("the closed guards' tool matchers share one budget: many costly ones cannot add up", () => {
  // Each pattern answers "no" on this name after ~4M steps (11 ms) of building DFA states: thirty
  // of them held the thread 0.3 s per payload, and said no closed guard applies.
  const guards = Array.from({ length: 30 }, (_, i) =>
    fakeHook({
      name: `guard-${i}`,
      on_error: "closed",
      matcher: { tool: `a[ab]{10}[c-${String.fromCharCode(100 + i % 20)}]{${1 + (i >> 2)}}` },
    }));
  const tool = abText(60_000);
  const budget = { left: MATCHER_STEPS_PER_EVENT };
  const guard = closedGuard(guards, "pre-tool-call", tool, false, budget);
  // The budget runs out part-way: the guard it could not answer is taken to apply.
  assert.match(guard?.name ?? "none", /^guard-([1-9]|1\d)$/);
  assert.ok(budget.left < 0);
  // A smaller budget (the service's request thread) ends sooner.
  assert.equal(
    closedGuard(guards, "pre-tool-call", tool, false, { left: 1 << 16 })?.name,
    "guard-0",
  );
});
