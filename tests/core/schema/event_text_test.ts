import assert from "node:assert/strict";
import { MAX_JSON_DEPTH, textDepth, tooDeepAt } from "../../../packages/core/schema/depth.ts";
import { parseEvent, tryParseEvent } from "../../../packages/core/schema/event.ts";
import { agentCall } from "../../../packages/agents/adapters.ts";
import { parseEventText, textOf } from "../../../packages/core/schema/event_text.ts";
import { agentEventOfText, eventOfText } from "../../../packages/agents/event_text.ts";

const BODIES = [
  {
    event_type: "pre-tool-call",
    session_id: "s",
    tool_name: "Bash",
    tool_input: { command: "ls" },
  },
  // Another tenant's id in the body, unknown fields, a snake_case type, a default to fill in.
  {
    tenant_id: "someone-else",
    extra: { nested: [1, { 'quote"[': "}" }] },
    event_type: "pre_agent_turn_stop",
    session_id: "s",
    last_message: "done [",
  },
  {
    event_type: "post-llm-call",
    session_id: "s",
    messages: [{ role: "user", content: "hi", name: "n" }],
    response: { text: '\\"' },
    store: { k: 1 },
  },
];

Deno.test("an event parsed from its text is the event parsed from the body, and again from the text", () => {
  for (const body of BODIES) {
    for (const text of [JSON.stringify(body), JSON.stringify(body, null, 2)]) {
      const source = { text, tenantId: "acme" };
      const parsed = parseEventText(source);
      assert.ok(parsed.ok, text);
      // What the service did with the body before: the same keys in the same order.
      const before = tryParseEvent({ ...JSON.parse(text), tenant_id: "acme" });
      assert.ok(before.ok);
      assert.equal(JSON.stringify(parsed.event), JSON.stringify(before.event));
      assert.equal(parsed.event.tenant_id, "acme");
      assert.equal(textOf(parsed.event), source);
      // What a worker makes of the text: the same again.
      assert.equal(JSON.stringify(eventOfText(source)), JSON.stringify(parsed.event));
    }
  }
});

Deno.test("an agent's payload makes the same event here, as the adapter did before, and again from the text", () => {
  const payloads = [
    {
      session_id: "s",
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "ls" },
    },
    { session_id: "s", hook_event_name: "Stop", stop_hook_active: true, cwd: "/w" },
  ];
  for (const payload of payloads) {
    const text = JSON.stringify(payload);
    const agent = { name: "claude-code" as const, at: "2026-01-01T00:00:00.000Z" };
    const source = { text, tenantId: "acme", agent };
    const { call, parsed } = agentEventOfText(source);
    assert.ok(parsed?.ok, text);
    const before = tryParseEvent({
      ...agentCall("claude-code", JSON.parse(text), undefined, agent.at).event,
      tenant_id: "acme",
    });
    assert.ok(before.ok);
    assert.equal(JSON.stringify(parsed.event), JSON.stringify(before.event));
    assert.equal(parsed.event.timestamp, agent.at);
    assert.equal(call.agentEvent, payload.hook_event_name);
    assert.equal(textOf(parsed.event), source);
    assert.equal(JSON.stringify(eventOfText(source)), JSON.stringify(parsed.event));
  }
  // An agent event with no hookbox event passes through: no event, nothing to send.
  const none = agentEventOfText({
    text: JSON.stringify({ session_id: "s", hook_event_name: "Nothing" }),
    tenantId: "acme",
    agent: { name: "claude-code", at: "2026-01-01T00:00:00.000Z" },
  });
  assert.equal(none.parsed, null);
});

Deno.test("only the event parsed from text has one: a copy or an event made otherwise is sent whole", () => {
  const parsed = parseEventText({ text: JSON.stringify(BODIES[0]), tenantId: "acme" });
  assert.ok(parsed.ok);
  assert.equal(textOf({ ...parsed.event }), undefined);
  assert.equal(textOf(parseEvent(BODIES[0])), undefined);
});

Deno.test("an event from text that does not validate is refused as from the body, and has no text", () => {
  const invalid = parseEventText({
    text: JSON.stringify({ event_type: "pre-tool-call", session_id: "s" }),
    tenantId: "acme",
  });
  assert.ok(!invalid.ok);
  assert.deepEqual([invalid.error.code, invalid.error.field], ["EVENT_INVALID", "tool_name"]);
  for (const text of ["[1]", "null", '"event"']) {
    const r = parseEventText({ text, tenantId: "acme" });
    assert.ok(!r.ok);
    assert.equal(r.error.code, "EVENT_INVALID");
  }
  assert.throws(() => eventOfText({ text: "[1]", tenantId: "acme" }), /JSON object/);
  // Nested too deep: found on the text, named by the path as before.
  const deep = `{"event_type":"pre-session","session_id":"s","x":{"y":${"[".repeat(70)}${
    "]".repeat(70)
  }}}`;
  const tooDeep = parseEventText({ text: deep, tenantId: "acme" });
  assert.ok(!tooDeep.ok);
  assert.equal(tooDeep.error.code, "JSON_TOO_DEEP");
  assert.equal(tooDeep.error.field, `x.y${".0".repeat(MAX_JSON_DEPTH - 2)}`);
  const justDeepEnough = `{"event_type":"pre-session","session_id":"s","x":${
    "[".repeat(MAX_JSON_DEPTH - 1)
  }${"]".repeat(MAX_JSON_DEPTH - 1)}}`;
  assert.ok(parseEventText({ text: justDeepEnough, tenantId: "acme" }).ok);
});

Deno.test("textDepth says a value is too deep exactly when tooDeepAt does, brackets in strings aside", () => {
  let seed = 7;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const pieces = ["a", '"', "\\", "[", "{", '\\"[', "x\\\\", "}]", "\u2028", "é", "\\u005b"];
  const value = (depth: number): unknown => {
    const kind = random(depth > 8 ? 3 : 6);
    if (kind === 0) return random(100);
    if (kind === 1) return pieces[random(pieces.length)]! + pieces[random(pieces.length)]!;
    if (kind === 2) return null;
    if (kind === 3) return Array.from({ length: random(3) }, () => value(depth + 1));
    return Object.fromEntries(
      Array.from(
        { length: random(3) },
        (_, i) => [pieces[random(pieces.length)]! + i, value(depth + 1)],
      ),
    );
  };
  for (let i = 0; i < 5000; i++) {
    const v = value(0);
    const text = JSON.stringify(v, null, random(2) === 0 ? 2 : undefined);
    for (const max of [0, 1, 2, 3, 5]) {
      assert.equal(textDepth(text) > max, tooDeepAt(v, max) !== null, `${text} at ${max}`);
    }
  }
  assert.equal(textDepth('{"a": "[[[[", "b": ["\\"]]"]}'), 2);
});
