/**
 * Values packed with their big parts as text (`lazy_json.ts`): whatever the
 * value, unpacking gives an equal one, read any way (deep equality, JSON
 * text, a spread, the structured clone); the big parts stay text until read;
 * two places that held one big object hold one object again.
 */
import { deepStrictEqual as assertEquals, equal, ok } from "node:assert/strict";
import fc from "fast-check";
import {
  INLINE_MAX_NODES,
  LAZY_MIN_NODES,
  OPEN_MAX_KEYS,
  packLazy,
  unpackLazy,
} from "../../../packages/core/schema/lazy_json.ts";

const wide = (n: number, prefix = "k") =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, i]));

/** True while `key` of `object` is still text (an accessor not yet read). */
const unread = (object: object, key: string) =>
  Object.getOwnPropertyDescriptor(object, key)?.get !== undefined;

Deno.test("an event's big tool_input stays text until read, then is the same value", () => {
  const input = { command: "ls", ...wide(5000) };
  const event = {
    event_type: "pre-tool-call",
    session_id: "s",
    tool_name: "Bash",
    tool_input: input,
  };
  const pack = packLazy(event);
  assertEquals(pack.paths, [["tool_input"]]);
  const value = unpackLazy(structuredClone(pack)) as typeof event;
  equal(value.tool_name, "Bash");
  ok(unread(value, "tool_input"), "reading tool_name left tool_input as text");
  equal(value.tool_input.command, "ls");
  ok(!unread(value, "tool_input"), "once read it is a plain property");
  assertEquals(value, event);
  assertEquals(Object.keys(value), Object.keys(event));
});

Deno.test("an unpacked value reads as the original through JSON, spreads and the structured clone", () => {
  const event = { a: 1, big: { list: Array.from({ length: 3000 }, (_, i) => ({ i })) }, z: "end" };
  const text = JSON.stringify(event);
  equal(JSON.stringify(unpackLazy(structuredClone(packLazy(event)))), text);
  assertEquals({ ...(unpackLazy(structuredClone(packLazy(event))) as object) }, event);
  assertEquals(structuredClone(unpackLazy(structuredClone(packLazy(event)))), event);
  // Set before it was ever read: the new value stands.
  const set = unpackLazy(structuredClone(packLazy(event))) as Record<string, unknown>;
  set.big = 7;
  assertEquals(set, { a: 1, big: 7, z: "end" });
});

Deno.test("one big object in two places is one object again, parsed once", () => {
  const input = wide(4000);
  const call = { event: { tool_input: input }, input: { tool_input: input } };
  const pack = packLazy({ call, event: { tool_input: input } });
  equal(pack.texts.length, 1);
  equal(pack.paths.length, 3);
  const value = unpackLazy(structuredClone(pack)) as {
    call: { event: { tool_input: unknown }; input: { tool_input: unknown } };
    event: { tool_input: unknown };
  };
  ok(value.call.event.tool_input === value.event.tool_input);
  ok(value.call.input.tool_input === value.event.tool_input);
});

Deno.test("small values travel whole; wide objects and big arrays as text; keys stay keys", () => {
  const small = { a: [1, 2, { b: "c" }], d: null };
  assertEquals(packLazy(small).paths, []);
  // Exactly at the limit: whole.
  const atLimit = { list: Array.from({ length: LAZY_MIN_NODES - 2 }, (_, i) => i) };
  assertEquals(packLazy(atLimit).paths, []);
  // A root wider than OPEN_MAX_KEYS is text whole; so is a big array.
  const root = wide(OPEN_MAX_KEYS + 1);
  assertEquals(packLazy(root).paths, [[]]);
  assertEquals(unpackLazy(structuredClone(packLazy(root))), root);
  const array = Array.from({ length: 5000 }, (_, i) => i);
  assertEquals(unpackLazy(structuredClone(packLazy(array))), array);
  // `__proto__` from JSON is an own key, packed and unpacked as one.
  const odd = JSON.parse(`{"__proto__": {"x": 1}, "big": ${JSON.stringify(wide(2000))}}`);
  const back = unpackLazy(structuredClone(packLazy(odd))) as Record<string, unknown>;
  equal(JSON.stringify(back), JSON.stringify(odd));
  ok(Object.hasOwn(back, "__proto__"));
});

Deno.test("any JSON value packs and unpacks to an equal one", () => {
  const json = fc.jsonValue({ maxDepth: 4 });
  // Big enough, sometimes, to have parts as text.
  const bulky = fc.record({
    small: json,
    big: fc.array(fc.record({ k: json, n: fc.integer() }), { minLength: 0, maxLength: 700 }),
    nested: fc.dictionary(fc.string({ maxLength: 4 }), fc.array(json, { maxLength: 400 }), {
      maxKeys: 5,
    }),
  });
  fc.assert(
    fc.property(fc.oneof(json, bulky), (value) => {
      const normal = JSON.parse(JSON.stringify(value));
      const back = unpackLazy(structuredClone(packLazy(normal)));
      equal(JSON.stringify(back), JSON.stringify(normal));
      assertEquals(back, normal);
    }),
    { numRuns: 200 },
  );
});

/** The values in `value`, itself included. */
function nodes(value: unknown): number {
  if (typeof value !== "object" || value === null) return 1;
  return 1 + Object.values(value).reduce((sum: number, v) => sum + nodes(v), 0);
}

Deno.test("many small parts do not travel whole: past a budget they travel as text", () => {
  // A hundred fields of a thousand values each: every field is small on its own.
  const tool_input = Object.fromEntries(
    Array.from({ length: 100 }, (_, i) => [`f${i}`, wide(1000, `k${i}_`)]),
  );
  const event = { event_type: "pre-tool-call", session_id: "s", tool_input };
  const pack = packLazy(event);
  ok(nodes(pack.tree) <= INLINE_MAX_NODES + 200, `${nodes(pack.tree)} values travel whole`);
  ok(pack.texts.length >= 90, `${pack.texts.length} parts as text`);
  assertEquals(unpackLazy(structuredClone(pack)), event);
});
