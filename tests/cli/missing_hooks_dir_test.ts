/**
 * A platform hooks folder named with `--hooks-dir` that is not there. The
 * agent's hook command names it (`hookbox install --hooks-dir`); moved or
 * deleted, every call ran without its hooks and said nothing.
 */
import { deepStrictEqual as assertEquals, match } from "node:assert/strict";
import { runCli } from "../_cli.ts";
import { tempDir } from "../_helpers.ts";

const PRE_TOOL_USE = JSON.stringify({
  session_id: "s",
  hook_event_name: "PreToolUse",
  tool_name: "Bash",
  tool_input: { command: "ls" },
});

Deno.test("a missing --hooks-dir is a warning the agent shows, and a block under --strict", async () => {
  const dir = await tempDir("hookbox-missing-dir-");
  try {
    const gone = `${dir}/platform-hooks`;
    const env = { HOOKBOX_CACHE_DIR: `${dir}/cache`, HOOKBOX_DAEMON: "0" };
    const args = ["dispatch", "--agent", "claude-code", "--event", "PreToolUse"];
    const warned = await runCli([...args, "--hooks-dir", gone], {
      cwd: dir,
      env,
      stdin: PRE_TOOL_USE,
    });
    assertEquals(warned.code, 0, warned.stderr);
    const line = `HOOK_DIR_UNREADABLE ${gone}: no such folder`;
    match(JSON.parse(warned.stdout).systemMessage, new RegExp(line));
    match(warned.stderr, new RegExp(line));
    const strict = await runCli([...args, "--strict", "--hooks-dir", gone], {
      cwd: dir,
      env,
      stdin: PRE_TOOL_USE,
    });
    const answer = JSON.parse(strict.stdout).hookSpecificOutput;
    assertEquals(answer.permissionDecision, "deny");
    match(answer.permissionDecisionReason, new RegExp(line));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("install refuses a --hooks-dir that is not there, and writes nothing", async () => {
  const dir = await tempDir("hookbox-missing-dir-");
  try {
    const run = await runCli(
      ["install", "--agent", "claude-code", "--hooks-dir", `${dir}/nope`],
      { cwd: dir, env: { HOME: dir } },
    );
    assertEquals(run.code, 1);
    match(run.stderr, new RegExp(`--hooks-dir ${dir}/nope: no such folder`));
    const written = await Deno.stat(`${dir}/.claude/settings.json`).then(() => true, () => false);
    assertEquals(written, false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
