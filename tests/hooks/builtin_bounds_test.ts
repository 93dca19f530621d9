/**
 * The built-in guards fail closed on big input: a dangerous command padded
 * to the largest event a hook is given is still blocked, and tool output the
 * redactor cannot scan is blocked rather than passed on unredacted.
 */
import { deepStrictEqual as assertEquals, match } from "node:assert/strict";
import { createExecutor } from "../../packages/hookbox/deno.ts";
import { ROOT } from "../_helpers.ts";

function guard(name: string) {
  return createExecutor({
    platformDirs: [`${ROOT}/hooks/${name}`],
    userDir: null,
    projectDir: null,
  });
}

function shell(command: string) {
  return {
    event_type: "pre-tool-call",
    session_id: "s",
    tool_name: "Bash",
    tool_input: { command },
  };
}

Deno.test("shell-guard-as blocks rm -rf / padded to nearly the 1 MiB event cap, and allows the padding", async () => {
  const executor = guard("shell-guard-as");
  const padding = `echo ${"a".repeat(1_000_000)}`;
  const blocked = await executor.dispatch(shell(`${padding}; rm -rf /`));
  assertEquals([blocked.decision, blocked.hooks[0]?.outcome], ["block", "block"]);
  const allowed = await executor.dispatch(shell(padding));
  assertEquals(allowed.decision, "allow");
  await executor.close();
});

Deno.test("shell-guard blocks a command longer than it checks, saying why", async () => {
  const executor = guard("shell-guard");
  const result = await executor.dispatch(shell(`echo ${"a".repeat(50_000)}; rm -rf /`));
  assertEquals(result.decision, "block");
  match(result.reason ?? "", /over the 4096 this guard checks/);
  await executor.close();
});

Deno.test("secret-redactor blocks tool output too large to scan instead of passing it on", async () => {
  const executor = guard("secret-redactor");
  const event = {
    event_type: "post-tool-call",
    session_id: "s",
    tool_name: "Bash",
    tool_input: { command: "cat creds" },
    tool_output: `AKIAIOSFODNN7EXAMPLE ${"x".repeat(1_100_000)}`,
  };
  const result = await executor.dispatch(event);
  assertEquals(result.decision, "block");
  assertEquals(result.hooks[0]?.outcome, "limit");
  match(result.hooks[0]?.detail ?? "", /^input: \d+ KiB of event \(the policy's input_kb\)$/);
  await executor.close();
});
