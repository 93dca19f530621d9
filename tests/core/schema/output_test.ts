import assert from "node:assert/strict";
import { mayBeControl, readStdout } from "../../../packages/core/schema/output.ts";

Deno.test("`readStdout()` reads control fields from a JSON object", () => {
  const r = readStdout(
    JSON.stringify({
      decision: "block",
      reason: "no",
      modified_input: { a: 1 },
      inject: [{ role: "user", content: "hi" }],
      disable_tools: ["Bash"],
      enable_tools: ["Read"],
      store: { k: 1 },
    }),
  );
  assert.equal(r.kind, "control");
  if (r.kind !== "control") return;
  assert.equal(r.control.decision, "block");
  assert.equal(r.control.reason, "no");
  assert.deepEqual(r.control.modified_input, { a: 1 });
  assert.deepEqual(r.control.inject, [{ role: "user", content: "hi", persistent: false }]);
  assert.deepEqual(r.control.store, { k: 1 });
});

Deno.test("`readStdout()` treats `deny` as an alias of `block`", () => {
  const r = readStdout('{"decision":"deny"}');
  assert.ok(r.kind === "control" && r.control.decision === "block");
});

Deno.test("`readStdout()` keeps non-JSON stdout as text", () => {
  for (const text of ["", "hello", "{not json", "[1,2]", "42", '"str"']) {
    assert.equal(readStdout(text).kind, "text", text);
  }
});

Deno.test("`readStdout()` reports invalid control fields as HOOK_OUTPUT_INVALID", () => {
  for (
    const [text, field] of [
      ['{"decision":"maybe"}', "decision"],
      ['{"inject":"x"}', "inject"],
      ['{"store":[1]}', "store"],
      ['{"disable_tools":"Bash"}', "disable_tools"],
    ]
  ) {
    const r = readStdout(text!);
    assert.equal(r.kind, "invalid", text);
    if (r.kind !== "invalid") continue;
    assert.equal(r.error.code, "HOOK_OUTPUT_INVALID");
    assert.equal(r.error.field, field);
  }
});

Deno.test("an empty object is read without the schema (a one-shot call loads no zod for it)", () => {
  // Source: a JS function hook that allows prints `{}`, and reading it loaded and built the
  // control schema (about 5 ms of a one-shot call with such a hook).
  for (const text of ["{}", " {}\n", "{ \n }"]) {
    assert.equal(mayBeControl(text), false, JSON.stringify(text));
    assert.deepEqual(readStdout(text), { kind: "control", control: {} });
  }
  for (const text of ['{"decision":"block"}', " {", "{}x", "{} {}"]) {
    assert.equal(mayBeControl(text), true, JSON.stringify(text));
  }
  assert.equal(readStdout("{} {}").kind, "text", "not JSON: text, as before");
});
