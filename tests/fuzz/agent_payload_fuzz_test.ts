/**
 * Fuzzing of agent payloads (a bounded run): a Claude Code or Copilot call of
 * `rm -rf /` through the shell tool, with hostile values in every other field
 * and hostile text around it (a byte-order mark, trailing garbage, a key given
 * twice, no session id), is always the agent's block where a closed guard on
 * that tool applies — never an allow and never the agent's non-blocking error.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { AsyncLocalStorage } from "node:async_hooks";
import { enableCallContexts } from "../../packages/host-deno/call_context.ts";
import { agentAnswerOf } from "../../packages/cli/_agent_dispatch.ts";
import { asCall } from "../../packages/cli/_io.ts";
import type { AgentAnswer, AgentName } from "../../packages/agents/adapters.ts";
import { tempDir } from "../_helpers.ts";
import { writeToolGuard } from "../agents/_agent_hooks.ts";

const SEED = Number(Deno.env.get("HOOKBOX_FUZZ_SEED") ?? 20261128);

enableCallContexts(AsyncLocalStorage);
const dir = await tempDir("hookbox-agent-fuzz-");
// The `rm -rf` guard, closed, on the shell tool only.
const hooks = `${dir}/hooks`;
await writeToolGuard(hooks, "^(Bash|bash)$");

/** Values a model or an agent might put in a field hookbox does not need. */
const hostile: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, 0, -0, 1e308, "", "\u0000", "\ud800", "😀", "/dev/zero", ".."),
  fc.string({ maxLength: 40 }),
  fc.integer({ min: 1, max: 3000 }).map((n) => "x".repeat(n * 100)),
  fc.integer({ min: 1, max: 300 }).map((depth) => {
    let v: unknown = "x";
    for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { k: v };
    return v;
  }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), { maxKeys: 20 }),
);
const FIELDS = [
  "session_id",
  "cwd",
  "transcript_path",
  "model",
  "extra",
  "__proto__",
  "tool_use_id",
];
const INPUT_FIELDS = ["description", "timeout", "extra", "__proto__", "command2"];

interface Case {
  top: [string, unknown][];
  input: [string, unknown][];
  form: "plain" | "bom" | "trailing" | "garbage" | "twice" | "no-session";
}

const cases: fc.Arbitrary<Case> = fc.record({
  top: fc.array(fc.tuple(fc.constantFrom(...FIELDS), hostile), { maxLength: 3 }),
  input: fc.array(fc.tuple(fc.constantFrom(...INPUT_FIELDS), hostile), { maxLength: 3 }),
  form: fc.constantFrom("plain", "bom", "trailing", "garbage", "twice", "no-session"),
});

/** Sets each field of `fields` on `target` as its own (a `__proto__` key stays a key). */
function setAll(target: Record<string, unknown>, fields: [string, unknown][]): void {
  for (const [key, value] of fields) {
    Object.defineProperty(target, key, {
      value,
      enumerable: true,
      configurable: true,
      writable: true,
    });
  }
}

/** The payload text of `c` as `agent` sends a shell call of `rm -rf /`. */
function payloadOf(agent: AgentName, c: Case): string {
  const input: Record<string, unknown> = { command: "rm -rf /" };
  setAll(input, c.input);
  const tool = agent === "copilot" ? "bash" : "Bash";
  const payload: Record<string, unknown> = agent === "copilot"
    ? { sessionId: "s1", timestamp: 1, cwd: dir, toolName: tool, toolArgs: input }
    : {
      session_id: "s1",
      cwd: dir,
      hook_event_name: "PreToolUse",
      tool_name: tool,
      tool_input: input,
    };
  setAll(payload, c.top);
  if (c.form === "no-session") delete payload[agent === "copilot" ? "sessionId" : "session_id"];
  let text = JSON.stringify(payload);
  const key = agent === "copilot" ? "toolName" : "tool_name";
  if (c.form === "bom") text = "\ufeff" + text;
  else if (c.form === "trailing") text += " \n ";
  else if (c.form === "garbage") text += "garbage";
  else if (c.form === "twice" || c.form === "no-session") {
    // Another tool named first: JSON.parse and the agent take the last.
    text = text.replace(`"${key}":"${tool}"`, `"${key}":"Read","${key}":"${tool}"`);
  }
  return text;
}

function denied(answer: AgentAnswer): boolean {
  if (answer.exitCode === 2) return true;
  if (answer.exitCode !== 0 || answer.stdout === "") return false;
  const out = JSON.parse(answer.stdout);
  return out.hookSpecificOutput?.permissionDecision === "deny" ||
    out.permissionDecision === "deny";
}

for (const agent of ["claude-code", "copilot"] as const) {
  Deno.test(`fuzz: a ${agent} call of rm -rf / with hostile fields is always blocked`, async () => {
    const event = agent === "copilot" ? "preToolUse" : "PreToolUse";
    await fc.assert(
      fc.asyncProperty(cases, async (c) => {
        const text = payloadOf(agent, c);
        const answer = await asCall(
          { stdin: text, cwd: dir },
          () => agentAnswerOf(agent, { "hooks-dir": [hooks], event }, { scanCache: false }),
        );
        assert.ok(
          denied(answer),
          `not blocked (${c.form}): exit ${answer.exitCode} ${answer.stdout.slice(0, 200)} ` +
            answer.stderr.slice(0, 300),
        );
      }),
      { numRuns: 60, seed: SEED },
    );
  });
}
