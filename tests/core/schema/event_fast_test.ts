/**
 * The event validation fast path against zod, the schema of record: on
 * generated events (valid ones, and ones with a field missing, of the wrong
 * type, empty, or odd), whatever the fast path accepts zod accepts too, as
 * the same object with the same JSON text; and the fast path does take the
 * common valid events (else it would be no fast path at all).
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import fc from "fast-check";
import { fastParseEvent } from "../../../packages/core/schema/_event_fast.ts";
import { EVENT_TYPES } from "../../../packages/core/schema/event_types.ts";
import { zodParseEvent } from "../../../packages/core/schema/event.ts";

/** Per event type: a valid value for each of its own fields. */
const VALID: Record<string, Record<string, unknown>> = {
  "pre-session": { source: "startup" },
  "post-session": { reason: "exit" },
  "pre-agent-turn": { prompt: "hi" },
  "post-agent-turn": { response: "done" },
  "pre-agent-turn-stop": { last_message: "done", stop_count: 1 },
  "post-agent-turn-stop": { last_message: "done" },
  "pre-tool-call": { tool_name: "Bash", tool_input: { command: "ls" }, tool_use_id: "t" },
  "post-tool-call": { tool_name: "Bash", tool_input: { command: "ls" }, tool_output: "a b" },
  "post-tool-call-failure": { tool_name: "Bash", tool_input: {}, error: "boom" },
  "pre-subagent": { subagent_name: "r", task: { x: 1 } },
  "post-subagent": { subagent_name: "r", task: "t", result: null },
  "pre-context-compact": { message_count: 3 },
  "post-context-compact": { summary: "s", compacted_count: 2 },
  "pre-llm-call": { messages: [{ role: "user", content: "hi", name: "n" }], tools: [], model: "m" },
  "post-llm-call": { messages: [{ content: "x", role: "assistant" }], response: {}, usage: 1 },
  "post-llm-call-failure": { error: "rate limited", iteration: 2 },
};
const COMMON = {
  timestamp: "2026-11-22T10:00:00Z",
  work_dir: "/w",
  tenant_id: "acme",
  turn_id: "t1",
  store: { a: 1 },
};

const odd = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.constant(""),
  fc.constant("x".repeat(129)),
  fc.constant("2026-11-22"),
  fc.constant(-1),
  fc.constant(1.5),
  fc.constant(2 ** 60),
  fc.constant([]),
  fc.constant([{ role: 1, content: "x" }]),
  fc.constant([{ role: "user" }]),
  fc.constant({ __proto__: null, a: 1 }),
  fc.constant(JSON.parse('{"__proto__": {"x": 1}}')),
  fc.constant({}),
  fc.string(),
  fc.integer(),
  fc.jsonValue({ maxDepth: 2 }),
);

const eventArb = fc.record({
  type: fc.constantFrom(...EVENT_TYPES),
  snake: fc.boolean(),
  common: fc.subarray(Object.keys(COMMON)),
  own: fc.array(fc.tuple(fc.nat(), fc.oneof(fc.constant("drop"), fc.constant("keep"), odd)), {
    maxLength: 3,
  }),
  extra: fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
  session: fc.oneof(fc.constant("s"), odd),
}).map(({ type, snake, common, own, extra, session }) => {
  const event: Record<string, unknown> = { ...extra };
  event.event_type = snake ? type.replaceAll("-", "_") : type;
  event.session_id = session;
  for (const key of common) event[key] = COMMON[key as keyof typeof COMMON];
  Object.assign(event, VALID[type]!);
  const fields = [...Object.entries(VALID[type]!), ...Object.entries(COMMON), ["session_id", "s"]];
  for (const [i, change] of own) {
    const [name] = fields[i % fields.length]!;
    if (change === "drop") delete event[name];
    else if (change !== "keep") event[name] = change;
  }
  return event;
});

Deno.test("fastParseEvent() accepts only what zod accepts, as the same object and JSON text", () => {
  let fast = 0;
  fc.assert(
    fc.property(eventArb, (event) => {
      const quick = fastParseEvent(event);
      if (quick === null) return;
      fast++;
      const viaZod = zodParseEvent(event);
      ok(viaZod.ok, `fast path accepted what zod refuses: ${JSON.stringify(event)}`);
      const zodEvent = viaZod.event;
      assertEquals(quick, zodEvent);
      assertEquals(JSON.stringify(quick), JSON.stringify(zodEvent));
    }),
    { numRuns: 20_000 },
  );
  ok(fast > 2_000, `the fast path took only ${fast} events`);
});

Deno.test("fastParseEvent() takes every event type's valid form", () => {
  for (const type of EVENT_TYPES) {
    const event = { event_type: type, session_id: "s", ...COMMON, ...VALID[type] };
    ok(fastParseEvent(event) !== null, type);
  }
});

Deno.test("a session_id longer than 1,024 characters is refused by both paths; 1,024 is taken", () => {
  const event = (session_id: string) => ({
    ...VALID["pre-tool-call"],
    event_type: "pre-tool-call",
    session_id,
  });
  const longest = "s".repeat(1024);
  assertEquals(fastParseEvent(event(longest))?.session_id, longest);
  ok(zodParseEvent(event(longest)).ok);
  assertEquals(fastParseEvent(event(`${longest}s`)), null);
  const refused = zodParseEvent(event(`${longest}s`));
  ok(!refused.ok && refused.error.code === "EVENT_INVALID" && refused.error.field === "session_id");
});

Deno.test("an owned input keeps its records and arrays (no copy); otherwise they are copied", () => {
  const input = (): Record<string, unknown> => ({
    ...VALID["pre-tool-call"],
    event_type: "pre-tool-call",
    session_id: "s",
    store: { a: 1 },
  });
  const given = input();
  const owned = fastParseEvent(given, true)!;
  ok(owned.tool_input === given.tool_input && owned.store === given.store);
  const copied = fastParseEvent(given)!;
  ok(copied.tool_input !== given.tool_input && copied.store !== given.store);
  const zod = zodParseEvent(input());
  ok(zod.ok);
  assertEquals(owned, zod.event);
  assertEquals(copied, zod.event);
  // Chat messages are rebuilt either way (zod puts role and content first).
  const llm: Record<string, unknown> = {
    ...VALID["pre-llm-call"],
    event_type: "pre-llm-call",
    session_id: "s",
  };
  const messages = llm.messages;
  ok(fastParseEvent(llm, true)!.messages !== messages);
});
