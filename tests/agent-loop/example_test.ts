/**
 * `examples/agent_loop.ts` end to end, as a user runs it: a scripted agent
 * session through the built-in hooks, skill prompt hooks and an in-process hook.
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { ROOT } from "../_helpers.ts";
import { EVENT_TYPES } from "../../packages/core/schema/event_types.ts";

Deno.test("examples/agent_loop.ts runs a whole session and every hook does its part", async () => {
  const run = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "examples/agent_loop.ts"],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const out = new TextDecoder().decode(run.stdout);
  assertEquals(run.code, 0, new TextDecoder().decode(run.stderr));
  const lines = out.trim().split("\n").map((l) => l.replace(/\s+/, " "));
  const has = (re: RegExp) => ok(lines.some((l) => re.test(l)), `${re} in\n${out}`);
  // Every §1 event of the session fired (all but a failing model call, which the script has not).
  for (const type of EVENT_TYPES.filter((t) => t !== "post-llm-call-failure")) {
    has(new RegExp(`^sandbox ${type} `));
  }
  // The built-in hooks.
  has(/^sandbox pre-tool-call shell-guard → block: .*rm -rf \//);
  has(/^in-process read_file succeeded; the model sees .*\[REDACTED:aws_access_key\]/);
  has(/^in-process web_fetch succeeded; the model sees .*UNTRUSTED CONTENT/);
  has(/^in-process run_tests failed: 2 of 12 tests failed/);
  has(/^in-process delegate succeeded; the model sees "Reviewed/);
  // The stop gate refuses once, then lets the agent stop.
  const gates = lines.filter((l) => l.startsWith("sandbox pre-agent-turn-stop stop-gate"));
  match(gates.at(-2) ?? "", /→ block: .*failing tests/);
  match(gates.at(-1) ?? "", /→ ok$/);
  has(/^in-process run ended: completed after 5 model calls, 4 tool calls, 1 stop\(s\) refused/);
  // Skill prompt hooks, as the model saw them call by call (seed 003's table).
  const calls = lines.filter((l) => l.startsWith("model "));
  assertEquals(calls, [
    "model planning call; prompt hooks seen: house-rules, plan-small",
    "model agent call; prompt hooks seen: house-rules, first-look, remember-tests",
    "model agent call; prompt hooks seen: house-rules, first-look, check-results, remember-tests",
    "model agent call; prompt hooks seen: house-rules, first-look, remember-tests",
    "model agent call; prompt hooks seen: house-rules, first-look, remember-tests",
  ]);
  has(/^agent answer: Fixed the failing tests; all 12 tests pass now\. \(completed\)/);
  assertEquals(
    lines.filter((l) => l === "agent client keeps prompt hook remember-tests").length,
    4,
  );
});
