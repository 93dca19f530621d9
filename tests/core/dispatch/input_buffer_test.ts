/**
 * Events are encoded into reused buffers for runtimes that borrow their input
 * (`Runtime.borrowsInput` with `selfTimed`): each call must still read exactly
 * its own event — never the tail of a longer one before it, never a buffer
 * another call in flight is reading — and runtimes that do not borrow get an
 * array of their own.
 */
import assert from "node:assert/strict";
import { callHook } from "../../../packages/core/dispatch/call_hook.ts";
import { resolvePolicy } from "../../../packages/core/policy.ts";
import type { RunRequest, RunResult, Runtime } from "../../../packages/core/runtime/types.ts";
import { parseEvent } from "../../../packages/core/schema/event.ts";
import { fakeHook, toolEvent } from "../../_helpers.ts";

const decoder = new TextDecoder();
const OK: RunResult = { exitCode: 0, stdout: "", stderr: "" };

/** A runtime that reads its input after `gate` opens, like a call still running. */
function borrowing(borrows: boolean) {
  const seen: { text: string; input: Uint8Array }[] = [];
  let open: () => void = () => {};
  let gate = Promise.resolve();
  const runtime: Runtime = {
    kind: "wasm",
    selfTimed: true,
    borrowsInput: borrows,
    async run(request: RunRequest) {
      const wait = gate;
      await wait;
      seen.push({ text: decoder.decode(request.input), input: request.input });
      return OK;
    },
  };
  return {
    runtime,
    seen,
    hold() {
      gate = new Promise((resolve) => (open = resolve));
    },
    release: () => open(),
  };
}

const hook = fakeHook({ name: "probe" });
const ctx = (runtime: Runtime) => ({
  runtimes: { wasm: runtime },
  policy: resolvePolicy({}),
  tenantId: "t",
  env: {},
});
const event = (command: string) => parseEvent(toolEvent({ tool_input: { command } }));

Deno.test("callHook hands each call exactly its own event through a reused buffer", async () => {
  const probe = borrowing(true);
  const commands = ["x".repeat(5000), "ls", "y".repeat(300), "", "z"];
  for (const command of commands) await callHook(hook, event(command), ctx(probe.runtime));
  assert.deepEqual(
    probe.seen.map((s) => JSON.parse(s.text).tool_input.command),
    commands,
  );
  assert.equal(probe.seen[1]!.input.buffer, probe.seen[0]!.input.buffer, "the buffer was reused");
});

Deno.test("callHook never reuses a buffer a call in flight still reads", async () => {
  const probe = borrowing(true);
  probe.hold();
  const first = callHook(hook, event("first ".repeat(100)), ctx(probe.runtime));
  const held = probe.release;
  probe.hold();
  const second = callHook(hook, event("second"), ctx(probe.runtime));
  held(); // the first reads now, after the second encoded its event
  await first;
  probe.release();
  await second;
  const commands = probe.seen.map((s) => JSON.parse(s.text).tool_input.command);
  assert.deepEqual(commands, ["first ".repeat(100), "second"]);
  assert.notEqual(probe.seen[0]!.input.buffer, probe.seen[1]!.input.buffer);
});

Deno.test("callHook gives runtimes that do not borrow their input an array of their own", async () => {
  const probe = borrowing(false);
  await callHook(hook, event("a"), ctx(probe.runtime));
  await callHook(hook, event("b"), ctx(probe.runtime));
  const [a, b] = probe.seen;
  assert.notEqual(a!.input.buffer, b!.input.buffer);
  assert.equal(a!.input.byteLength, a!.input.buffer.byteLength, "exactly the event's bytes");
});
