/**
 * `closedGuard` decides, for a payload hookbox cannot read, whether a closed
 * guard would have applied (then the agent gets a block). Its tool matcher
 * runs on the tool name read from the payload's first 64 KiB: on the thread
 * that answers the service's requests, and within the budget of an event's
 * matchers like any other.
 */
import assert from "node:assert/strict";
import { closedGuard } from "../../packages/agents/unreadable.ts";
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
