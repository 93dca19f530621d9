/**
 * An agent's payload rides along in the event as `agent.input` without the
 * values the event already carries under its §1 names, so a tool's output or
 * argument counts once against the policy's `input_kb`. Carried twice, a 600
 * KB command output went over the default 1 MiB, the closed secret-redactor
 * failed on it, and the agent got `[hookbox: the tool's output was withheld]`
 * in place of its output.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { agentAnswer, agentCall } from "../../packages/agents/adapters.ts";
import { createExecutor } from "../../packages/hookbox/deno.ts";
import { ROOT } from "../_helpers.ts";

/** `kb` KiB of ordinary log lines with one secret in the middle. */
function bigLog(kb: number, secret: string): string {
  const line = "2026-11-29T01:00:00Z INFO worker 7 processed batch 1234 in 12 ms\n";
  const half = line.repeat(Math.ceil((kb * 512) / line.length));
  return `${half}export AWS_SECRET_ACCESS_KEY=${secret}\n${half}`;
}

Deno.test("agent.input leaves out what the event carries, and names where each went", () => {
  const response = { stdout: "hello\n", stderr: "", interrupted: false, isImage: false };
  const input = { command: "echo hello" };
  const call = agentCall("claude-code", {
    session_id: "s1",
    transcript_path: "/home/u/.claude/t.jsonl",
    cwd: "/home/u/p",
    permission_mode: "default",
    hook_event_name: "PostToolUse",
    tool_name: "Bash",
    tool_input: input,
    tool_response: response,
    tool_use_id: "t1",
  });
  const event = call.event!;
  assertEquals(event.tool_output, response);
  assertEquals(event.agent, {
    name: "claude-code",
    event: "PostToolUse",
    input: {
      session_id: "s1",
      transcript_path: "/home/u/.claude/t.jsonl",
      cwd: "/home/u/p",
      permission_mode: "default",
      hook_event_name: "PostToolUse",
    },
    moved: {
      tool_name: "tool_name",
      tool_input: "tool_input",
      tool_response: "tool_output",
      tool_use_id: "tool_use_id",
    },
  });
  // The answer is made of the agent's own payload, whole.
  assertEquals(call.input.tool_response, response);

  // Copilot sends its tool's arguments as JSON text: the text is left out for the object.
  const args = JSON.stringify({ command: "ls", description: "list" });
  const copilot = agentCall("copilot", {
    sessionId: "s2",
    timestamp: 1,
    cwd: "/p",
    toolName: "bash",
    toolArgs: args,
  }, "preToolUse").event!;
  assertEquals(copilot.tool_input, { command: "ls", description: "list" });
  assertEquals(copilot.agent, {
    name: "copilot",
    event: "preToolUse",
    input: { sessionId: "s2", timestamp: 1, cwd: "/p" },
    moved: { toolName: "tool_name", toolArgs: "tool_input" },
  });
});

Deno.test("a 600 KB tool output is redacted and handed to the agent, not withheld", async () => {
  const executor = createExecutor({
    platformDirs: [`${ROOT}/hooks/secret-redactor`],
    userDir: null,
    projectDir: null,
  });
  try {
    const secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
    const stdout = bigLog(600, secret);
    const call = agentCall("claude-code", {
      session_id: "s1",
      cwd: "/tmp",
      hook_event_name: "PostToolUse",
      tool_name: "Bash",
      tool_input: { command: "cat build.log" },
      tool_response: { stdout, stderr: "", interrupted: false, isImage: false },
      tool_use_id: "t1",
    });
    const result = await executor.dispatch(call.event!);
    assertEquals([result.decision, result.hooks[0]?.outcome], ["allow", "ok"], result.reason ?? "");
    const answer = JSON.parse(agentAnswer(call, result).stdout);
    const given = answer.hookSpecificOutput.updatedToolOutput.stdout as string;
    ok(!given.includes(secret), "the secret is not handed on");
    ok(!given.includes("withheld"), given.slice(0, 200));
    // Everything else of the output reaches the agent.
    ok(given.length > stdout.length - secret.length, `${given.length} of ${stdout.length}`);
  } finally {
    await executor.close();
  }
});
