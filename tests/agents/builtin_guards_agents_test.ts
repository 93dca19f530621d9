/**
 * The built-in shell guards see every agent's shell tool. Each agent names
 * its shell tool its own way (`Bash`, `run_shell_command`, `bash`, `Shell`,
 * `run_command`); a guard whose matcher missed one never ran for that agent:
 * Windsurf's `run_command` went unchecked.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { agentAnswer, agentCall, type AgentName } from "../../packages/agents/adapters.ts";
import { createExecutor } from "../../packages/hookbox/deno.ts";
import { ROOT } from "../_helpers.ts";

/** Each agent's pre-tool-call payload for a shell command, as it sends it. */
const SHELL_CALLS: [AgentName, (command: string) => Record<string, unknown>, string?][] = [
  ["claude-code", (command) => ({
    session_id: "s",
    cwd: "/home/u/p",
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command },
  })],
  ["codex", (command) => ({
    session_id: "s",
    cwd: "/home/u/p",
    hook_event_name: "PreToolUse",
    turn_id: "t",
    tool_name: "Bash",
    tool_input: { command },
  })],
  ["gemini-cli", (command) => ({
    session_id: "s",
    cwd: "/home/u/p",
    hook_event_name: "BeforeTool",
    tool_name: "run_shell_command",
    tool_input: { command },
  })],
  ["copilot", (command) => ({
    sessionId: "s",
    timestamp: 1,
    cwd: "/home/u/p",
    toolName: "bash",
    toolArgs: JSON.stringify({ command }),
  }), "preToolUse"],
  ["cursor", (command) => ({
    conversation_id: "c",
    hook_event_name: "beforeShellExecution",
    workspace_roots: ["/home/u/p"],
    command,
    cwd: "/home/u/p",
  })],
  ["windsurf", (command) => ({
    agent_action_name: "pre_run_command",
    trajectory_id: "t",
    execution_id: "e",
    tool_info: { command_line: command, cwd: "/home/u/p" },
  })],
  ["agenthooks", (command) => ({
    event_type: "pre-tool-call",
    session_id: "s",
    work_dir: "/home/u/p",
    tool_name: "Shell",
    tool_input: { command },
  })],
];

for (const guard of ["shell-guard", "shell-guard-as"]) {
  Deno.test(`${guard} runs for every agent's shell tool: rm -rf / blocked, ls allowed`, async () => {
    const executor = createExecutor({
      platformDirs: [`${ROOT}/hooks/${guard}`],
      userDir: null,
      projectDir: null,
    });
    try {
      for (const [agent, payload, event] of SHELL_CALLS) {
        const denied = agentCall(agent, payload("rm -rf /"), event);
        const result = await executor.dispatch(denied.event!);
        assertEquals(
          [result.decision, result.blocked_by, result.hooks.length],
          ["block", guard, 1],
          `${agent}: ${JSON.stringify(denied.event)}`,
        );
        // The agent is told no, in its own protocol: exit 2, or a deny or block in JSON.
        const answer = agentAnswer(denied, result);
        assertEquals(
          answer.exitCode === 2 || /"(?:deny|block)"/.test(answer.stdout),
          true,
          `${agent}: ${JSON.stringify(answer)}`,
        );
        const allowed = await executor.dispatch(agentCall(agent, payload("ls -la"), event).event!);
        assertEquals([allowed.decision, allowed.hooks.length], ["allow", 1], agent);
      }
    } finally {
      await executor.close();
    }
  });
}
