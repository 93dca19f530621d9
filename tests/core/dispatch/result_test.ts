import assert from "node:assert/strict";
import { isHookboxError } from "../../../packages/core/errors.ts";
import { createExecutor } from "../../../packages/hookbox/deno.ts";
import { exits2, fakeHook, RESULT_KEYS, toolEvent } from "../../_helpers.ts";
import { run } from "./_run.ts";

/** SPEC §4's record keys plus `code`, the stable failure code (docs/errors.md). */
const RECORD_KEYS = [
  "code",
  "detail",
  "duration_ms",
  "exit_code",
  "fuel",
  "level",
  "name",
  "outcome",
  "runtime",
  "stderr",
  "stdout",
];

Deno.test("`dispatch()` returns exactly the SPEC §4 result keys for an allow", async () => {
  const { result } = await run([fakeHook({ name: "quiet" }, { level: "user" })], toolEvent());
  const json = JSON.parse(JSON.stringify(result));
  assert.deepEqual(Object.keys(json).sort(), RESULT_KEYS);
  assert.deepEqual(
    { ...json, hooks: [] },
    {
      event_type: "pre-tool-call",
      decision: "allow",
      reason: null,
      blocked_by: null,
      modified_input: null,
      modified_output: null,
      inject: [],
      disable_tools: [],
      enable_tools: [],
      store: {},
      hooks: [],
    },
  );
  const [record] = json.hooks;
  assert.deepEqual(Object.keys(record).sort(), RECORD_KEYS);
  assert.equal(record.name, "quiet");
  assert.equal(record.level, "user");
  assert.equal(record.runtime, "wasm");
  assert.equal(record.outcome, "ok");
  assert.equal(record.exit_code, 0);
  assert.equal(typeof record.duration_ms, "number");
  assert.equal(record.detail, null);
});

Deno.test("`dispatch()` reports the canonical event_type for an alias", async () => {
  const { result } = await run([], toolEvent({ event_type: "pre_tool_call" }));
  assert.equal(result.event_type, "pre-tool-call");
  assert.deepEqual(result.hooks, []);
});

Deno.test("`dispatch()` returns exactly the SPEC §4 result keys for a block", async () => {
  const { result } = await run([fakeHook({ name: "block-rm" })], toolEvent(), {
    "block-rm": exits2("rm -rf is not allowed"),
  });
  const json = JSON.parse(JSON.stringify(result));
  assert.deepEqual(Object.keys(json).sort(), RESULT_KEYS);
  assert.equal(json.decision, "block");
  assert.equal(json.reason, "rm -rf is not allowed");
  assert.equal(json.blocked_by, "block-rm");
  assert.deepEqual(Object.keys(json.hooks[0]).sort(), RECORD_KEYS);
  assert.equal(json.hooks[0].outcome, "block");
  assert.equal(json.hooks[0].exit_code, 2);
  assert.equal(json.hooks[0].stderr, "rm -rf is not allowed");
});

Deno.test("`executor.dispatch()` rejects an invalid event with EVENT_INVALID naming the field", async () => {
  const executor = createExecutor({ userDir: null, projectDir: null });
  try {
    await assert.rejects(
      executor.dispatch({ event_type: "pre-tool-call", session_id: "s", tool_input: {} }),
      (err) => isHookboxError(err, "EVENT_INVALID") && err.field === "tool_name",
    );
    await assert.rejects(
      executor.dispatch("not an object"),
      (err) => isHookboxError(err, "EVENT_INVALID"),
    );
  } finally {
    await executor.close();
  }
});
