import assert from "node:assert/strict";
import { isHookboxError } from "../../../packages/core/errors.ts";
import { parseEvent, parseEventJson, tryParseEvent } from "../../../packages/core/schema/event.ts";
import { EVENT_TYPES } from "../../../packages/core/schema/event_types.ts";

const COMMON = {
  timestamp: "2025-06-01T12:30:00Z",
  session_id: "sess-1",
  work_dir: "/tmp/project",
  tenant_id: "acme",
  turn_id: "turn-7",
  store: { seen: 1 },
};
const TOOL = { tool_name: "Bash", tool_input: { command: "ls" }, tool_use_id: "tu-1" };
const MESSAGES = [{ role: "user", content: "hi" }];

/** One event per type of SPEC §1, with every field the table lists. */
const SAMPLES: Record<string, Record<string, unknown>> = {
  "pre-session": { source: "startup" },
  "post-session": { reason: "logout" },
  "pre-agent-turn": { prompt: "fix the bug" },
  "post-agent-turn": { response: "done" },
  "pre-agent-turn-stop": { last_message: "I am done", stop_count: 2 },
  "post-agent-turn-stop": { last_message: "bye" },
  "pre-tool-call": TOOL,
  "post-tool-call": { ...TOOL, tool_output: { stdout: "a b" } },
  "post-tool-call-failure": { ...TOOL, error: "command not found" },
  "pre-subagent": { subagent_name: "researcher", task: "find docs" },
  "post-subagent": { subagent_name: "researcher", task: "find docs", result: "found" },
  "pre-context-compact": { message_count: 120 },
  "post-context-compact": { summary: "we did things", compacted_count: 100 },
  "pre-llm-call": { messages: MESSAGES, tools: [{ name: "Bash" }], model: "m1", iteration: 0 },
  "post-llm-call": {
    messages: MESSAGES,
    tools: [],
    model: "m1",
    iteration: 1,
    response: { content: "hello" },
    usage: { input_tokens: 3 },
  },
  "post-llm-call-failure": { messages: MESSAGES, error: "rate limited" },
};

function rejected(input: unknown) {
  const result = tryParseEvent(input);
  assert.equal(result.ok, false, `expected rejection of ${JSON.stringify(input)}`);
  if (result.ok) throw new Error("unreachable");
  return result.error;
}

Deno.test("`parseEvent()` accepts every event type of SPEC §1 with its fields", () => {
  assert.deepEqual(Object.keys(SAMPLES).sort(), [...EVENT_TYPES].sort());
  for (const [type, fields] of Object.entries(SAMPLES)) {
    const input = { event_type: type, ...COMMON, ...fields };
    const event = parseEvent(input);
    assert.deepEqual(event, input, type);
  }
});

Deno.test("`parseEvent()` accepts snake_case aliases and returns the kebab-case type", () => {
  for (const [type, fields] of Object.entries(SAMPLES)) {
    const event = parseEvent({ event_type: type.replaceAll("-", "_"), session_id: "s", ...fields });
    assert.equal(event.event_type, type);
  }
});

Deno.test("`parseEvent()` keeps unknown fields untouched", () => {
  const extra = { x_custom: { nested: [1, "two", null], deep: { ok: true } }, agent: "claude" };
  const event = parseEvent({ event_type: "pre-tool-call", session_id: "s", ...TOOL, ...extra });
  assert.deepEqual(event.x_custom, extra.x_custom);
  assert.equal(event.agent, "claude");
  const input = { ...TOOL.tool_input, unknown_arg: { a: [1] } };
  const withInput = parseEvent({
    ...SAMPLES["pre-tool-call"],
    event_type: "pre-tool-call",
    session_id: "s",
    tool_input: input,
  });
  assert.deepEqual(withInput.tool_input, input);
});

Deno.test("`parseEvent()` needs only session_id besides event_type for session events", () => {
  const event = parseEvent({ event_type: "pre-session", session_id: "s" });
  assert.equal(event.event_type, "pre-session");
});

Deno.test("`tryParseEvent()` rejects a missing field with EVENT_INVALID naming it", () => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ session_id: "s" }, "event_type"],
    [{ event_type: "pre-session" }, "session_id"],
    [{ event_type: "pre-tool-call", session_id: "s", tool_input: {} }, "tool_name"],
    [{ event_type: "pre-tool-call", session_id: "s", tool_name: "Bash" }, "tool_input"],
    [{ event_type: "pre-agent-turn", session_id: "s" }, "prompt"],
    [{ event_type: "pre-agent-turn-stop", session_id: "s" }, "last_message"],
    [{ event_type: "pre-subagent", session_id: "s", task: "t" }, "subagent_name"],
    [{ event_type: "pre-context-compact", session_id: "s" }, "message_count"],
    [{ event_type: "pre-llm-call", session_id: "s" }, "messages"],
  ];
  for (const [input, field] of cases) {
    const error = rejected(input);
    assert.equal(error.code, "EVENT_INVALID", field);
    assert.equal(error.field, field);
    assert.match(error.message, new RegExp(field));
  }
});

Deno.test("`tryParseEvent()` rejects a mistyped field with EVENT_INVALID naming it", () => {
  const base = { event_type: "pre-tool-call", session_id: "s", ...TOOL };
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ ...base, tool_input: "rm -rf /" }, "tool_input"],
    [{ ...base, tool_input: ["ls"] }, "tool_input"],
    [{ ...base, tool_name: 42 }, "tool_name"],
    [{ ...base, session_id: 7 }, "session_id"],
    [{ ...base, store: "x" }, "store"],
    [{ ...base, event_type: "pre-tool-use" }, "event_type"],
    [{ event_type: "pre-agent-turn", session_id: "s", prompt: 5 }, "prompt"],
    [
      { event_type: "pre-agent-turn-stop", session_id: "s", last_message: "m", stop_count: "x" },
      "stop_count",
    ],
    [{ event_type: "pre-context-compact", session_id: "s", message_count: -1 }, "message_count"],
    [
      { event_type: "pre-llm-call", session_id: "s", messages: [{ content: "no role" }] },
      "messages.0.role",
    ],
  ];
  for (const [input, field] of cases) {
    const error = rejected(input);
    assert.equal(error.code, "EVENT_INVALID", field);
    assert.equal(error.field, field);
  }
});

Deno.test("`tryParseEvent()` rejects a timestamp that is not RFC 3339", () => {
  for (const timestamp of ["yesterday", "2025-06-01", "2025-06-01 12:30", 1717245000]) {
    const error = rejected({ event_type: "pre-session", session_id: "s", timestamp });
    assert.equal(error.code, "EVENT_INVALID");
    assert.equal(error.field, "timestamp");
  }
  for (const timestamp of ["2025-06-01T12:30:00Z", "2025-06-01T12:30:00.123+02:00"]) {
    assert.equal(
      parseEvent({ event_type: "pre-session", session_id: "s", timestamp }).timestamp,
      timestamp,
    );
  }
});

Deno.test("`tryParseEvent()` rejects values that are not JSON objects", () => {
  for (const input of [null, 42, "pre-tool-call", [], [{ event_type: "pre-session" }]]) {
    assert.equal(rejected(input).code, "EVENT_INVALID");
  }
});

Deno.test("`parseEvent()` throws the same error `tryParseEvent()` returns", () => {
  assert.throws(
    () => parseEvent({ event_type: "pre-session" }),
    (err) => isHookboxError(err, "EVENT_INVALID") && err.field === "session_id",
  );
});

Deno.test("`parseEventJson()` rejects bad JSON with EVENT_JSON_INVALID", () => {
  for (const text of ["{", "", "{event_type: 'x'}", "nope"]) {
    assert.throws(() => parseEventJson(text), (err) => isHookboxError(err, "EVENT_JSON_INVALID"));
  }
  assert.throws(
    () => parseEventJson('{"event_type":"pre-session"}'),
    (err) => isHookboxError(err, "EVENT_INVALID") && err.field === "session_id",
  );
});
