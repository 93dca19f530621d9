/**
 * A big event whose tool input or output a hook rewrites, as the service
 * holds it on the thread that answers every tenant: its big parts as text
 * (`lazy_json.ts`). Re-checking the rewrite, handing the event to the hooks
 * and writing the agent's answer copy those parts as text; none parses them
 * there, and every hook and the agent still get the whole value.
 */
import assert from "node:assert/strict";
import { dispatchEvent } from "../../../packages/core/dispatch/dispatch.ts";
import { resolvePolicy } from "../../../packages/core/policy.ts";
import { createPromptRuntime } from "../../../packages/core/runtime/prompt.ts";
import { type HookEvent, parseEvent } from "../../../packages/core/schema/event.ts";
import {
  copyLazy,
  lazyJsonPieces,
  packBigTexts,
  packLazy,
  piecesLength,
  printedLength,
  stringifyLazy,
  tokenizedClone,
  tokenizedJsonBytes,
  unpackBigTexts,
  unpackLazy,
  unreadBigChars,
  unreadToken,
} from "../../../packages/core/schema/lazy_json.ts";
import { agentAnswer, agentCall, withNotices } from "../../../packages/agents/adapters.ts";
import { allowResult } from "../../../packages/core/dispatch/result.ts";
import { fakeHook, fakeRuntime, prints } from "../../_helpers.ts";
import { concatBytes } from "../../../packages/core/bytes.ts";

/** 3,000 small keys: more than travel as values. */
const big = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`k${i}`, `v${i}`]));

/** `value` as the service's request thread gets it from the event codec. */
function asReceived<T>(value: T): T {
  return unpackLazy(packLazy(value)) as T;
}

Deno.test("stringifyLazy() writes unread parts as their text, the same JSON, and leaves them unread", () => {
  const value = asReceived({ a: 1, tool_input: { command: "ls", big }, list: [big, big] });
  assert.notEqual(unreadToken(value.tool_input, "big"), null);
  const wrapped = { answer: { updatedInput: value.tool_input }, rest: value };
  const expected = JSON.stringify({
    answer: { updatedInput: { command: "ls", big } },
    rest: { a: 1, tool_input: { command: "ls", big }, list: [big, big] },
  });
  assert.equal(stringifyLazy(wrapped), expected);
  assert.notEqual(unreadToken(value.tool_input, "big"), null, "still unread");
  // A string that looks like a token is data: only this call's nonce is spliced.
  const forged = asReceived({ s: "\u0000x:0\u0000", big });
  assert.equal(stringifyLazy(forged), JSON.stringify({ s: "\u0000x:0\u0000", big }));
  // Read normally, it is parsed once and is then a plain value.
  assert.deepEqual(value.tool_input.big, big);
  assert.equal(unreadToken(value.tool_input, "big"), null);
});

Deno.test("copyLazy() copies without reading, and a field set on the copy is the copy's alone", () => {
  const value = asReceived({ tool_input: { command: "ls", big } }).tool_input;
  const copy = copyLazy(value);
  copy.big = { replaced: "yes" };
  assert.notEqual(unreadToken(value, "big"), null, "the original is untouched and unread");
  assert.deepEqual(copy.big, { replaced: "yes" });
  assert.deepEqual(value.big, big);
  // A plain object is spread: __proto__ data stays data.
  const plain = JSON.parse('{"__proto__":{"x":1},"a":2}');
  assert.deepEqual(Object.keys(copyLazy(plain)), ["__proto__", "a"]);
});

Deno.test("a rewritten big event is re-checked and handed to hooks whole, its big parts never parsed here", async () => {
  const event = asReceived(parseEvent({
    event_type: "post-tool-call",
    session_id: "s",
    tool_name: "Bash",
    tool_input: { command: "cat .env", big },
    tool_output: "token=abc",
  }));
  assert.notEqual(unreadToken(event.tool_input as object, "big"), null);
  const hooks = [
    fakeHook({ name: "guard", priority: 900, trigger: "post-tool-call" }),
    fakeHook({ name: "redactor", priority: 1, trigger: "post-tool-call" }),
  ];
  const runtime = fakeRuntime({
    guard: () => ({ exitCode: 0, stdout: "" }),
    redactor: prints({ modified_output: "token=[REDACTED]" }),
  });
  const result = await dispatchEvent(hooks, event as HookEvent, {
    runtimes: { wasm: runtime, prompt: createPromptRuntime() },
    policy: resolvePolicy({}),
    tenantId: "t",
    env: {},
  });
  assert.equal(result.decision, "allow");
  assert.equal(result.modified_output, "token=[REDACTED]");
  // The guard saw the original, then (re-checked) the redaction, each with the whole input.
  assert.deepEqual(runtime.calls.map((c) => c.hook), ["guard", "redactor", "guard"]);
  for (const call of runtime.calls) {
    assert.deepEqual((call.event.tool_input as { big: unknown }).big, big, call.hook);
  }
  assert.equal(runtime.calls[2]!.event.tool_output, "token=[REDACTED]");
  assert.notEqual(unreadToken(event.tool_input as object, "big"), null, "never parsed here");
});

Deno.test("the agent's answer lays a rewrite over its big tool input without parsing it", () => {
  const payload = {
    hook_event_name: "PreToolUse",
    session_id: "s",
    tool_name: "Bash",
    tool_input: { command: "make", big },
  };
  const call = asReceived({ call: agentCall("claude-code", payload) }).call;
  const result = {
    ...allowResult("pre-tool-call"),
    modified_input: { command: "timeout 60 make" },
  };
  const answer = agentAnswer(call, result);
  const updated = JSON.parse(answer.stdout).hookSpecificOutput.updatedInput;
  assert.deepEqual(updated, { command: "timeout 60 make", big });
  assert.notEqual(unreadToken(call.event!.tool_input as object, "big"), null, "never parsed here");
  // A failed hook's line added to the answer's systemMessage: the answer is not parsed back.
  const parse = JSON.parse;
  let parsed = 0;
  JSON.parse = ((text: string, reviver?: never) => {
    parsed = Math.max(parsed, text.length);
    return parse(text, reviver);
  }) as typeof JSON.parse;
  let noticed;
  try {
    noticed = withNotices(call, answer, ["hookbox: hook x failed"]);
  } finally {
    JSON.parse = parse;
  }
  assert.equal(parsed, 0, "nothing parsed to add the line");
  const json = JSON.parse(noticed.stdout);
  assert.equal(json.systemMessage, "hookbox: hook x failed");
  assert.deepEqual(json.hookSpecificOutput.updatedInput, { command: "timeout 60 make", big });
  assert.match(noticed.stderr, /hook x failed/);
  assert.notEqual(unreadToken(call.event!.tool_input as object, "big"), null, "still unread");
});

Deno.test("a hook's big output crosses as JSON bytes and is written into the answer as they are", () => {
  // Quotes, escapes, non-ASCII, an astral character and a lone surrogate: all must come back.
  const big = `say "hi"\n\t\u00e9\u{1F600}\ud800 `.repeat(10_000);
  const small = "fine";
  const results = [{ hooks: [{ stdout: big, stderr: small }, { stdout: small, stderr: big }] }];
  const expected = JSON.stringify({ answer: results });
  const { texts, transfer } = packBigTexts(results);
  assert.equal(texts.length, 2);
  assert.equal(transfer.length, 2);
  // What travels: the records without their big texts, which go as bytes (moved, not copied).
  const moved = structuredClone({ results, texts }, { transfer });
  assert.equal(transfer[0]!.byteLength, 0, "transferred");
  assert.equal(moved.results[0]!.hooks[0]!.stdout, "");
  unpackBigTexts(moved.results, moved.texts);
  const record = moved.results[0]!.hooks[0]!;
  assert.equal(printedLength(record, "stdout"), big.length);
  assert.equal(unreadBigChars(moved.results), 2 * big.length);
  // Written into an answer without being read: byte for byte what encoding the whole gives.
  const pieces = lazyJsonPieces({ answer: moved.results });
  assert.deepEqual(
    concatBytes(pieces, piecesLength(pieces)),
    new TextEncoder().encode(expected),
  );
  // Each big text is a piece of its own, the very bytes that came: never copied.
  for (const text of moved.texts) assert.ok(pieces.includes(text.json));
  assert.equal(stringifyLazy({ answer: moved.results }), expected);
  assert.equal(unreadBigChars(moved.results), 2 * big.length, "still unread");
  // Read, it is the text the hook printed.
  assert.equal(record.stdout, big);
  assert.equal(moved.results[0]!.hooks[1]!.stderr, big);
  assert.equal(unreadBigChars(moved.results), 0);
});

Deno.test("an answer cloned for the codec's thread carries big output and event parts as they are, unread", () => {
  const big = `say "hi"\n\t\u00e9\u{1F600}\ud800 `.repeat(10_000);
  const printed = [{ stdout: big, stderr: "fine" }];
  const input = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i]));
  const reason = "r".repeat(100_000);
  const expected = JSON.stringify({
    decision: "block",
    reason,
    hooks: printed,
    modified_input: { tool_input: input },
  });
  // The hook's big output as it comes from the plugin worker: JSON bytes, unread.
  const results = [{ hooks: printed.map((h) => ({ ...h })) }];
  const { texts, transfer } = packBigTexts(results);
  const moved = structuredClone({ results, texts }, { transfer });
  unpackBigTexts(moved.results, moved.texts);
  // And a big part of an event (a rewritten tool input) that is still text.
  const holder = unpackLazy(structuredClone(packLazy({ tool_input: input }))) as object;
  const answer = {
    decision: "block",
    reason,
    hooks: moved.results[0]!.hooks,
    modified_input: holder,
  };
  // Posting the answer itself would read every accessor (the structured clone does).
  const tokenized = structuredClone(tokenizedClone(answer));
  assert.equal(unreadBigChars(moved.results), big.length, "the output is still unread");
  assert.notEqual(unreadToken(holder, "tool_input"), null, "the event part is still unread");
  const written = new TextDecoder().decode(tokenizedJsonBytes(tokenized));
  assert.ok(written === expected, "the same JSON as the whole value's");
});
