import assert from "node:assert/strict";
import type { EffectiveLimits } from "../../../packages/core/runtime/types.ts";
import { fakeHook, toolEvent } from "../../_helpers.ts";
import { recordOf, run } from "./_run.ts";

Deno.test("`dispatch()` lowers a hook's limits to the policy ceilings, never raises them", async () => {
  const hook = fakeHook({
    name: "h",
    timeout: 5000,
    limits: { memory_mb: 16, fuel: 5_000_000, output_kb: 8 },
  });
  let seen: EffectiveLimits | null = null;
  await run([hook], toolEvent(), {
    h: (_event, request) => {
      seen = request.limits;
      return {};
    },
  }, { maxTimeoutMs: 1000, maxMemoryMb: 64, maxFuel: 1_000_000, maxOutputKb: 4 });
  assert.ok(seen);
  const limits = seen as EffectiveLimits;
  assert.equal(limits.timeoutMs, 1000);
  assert.equal(limits.memoryMb, 16);
  assert.equal(limits.fuel, 1_000_000);
  assert.equal(limits.outputKb, 4);
});

Deno.test("`dispatch()` records an event larger than the input limit as limit/input", async () => {
  const big = toolEvent({ tool_input: { command: "x".repeat(4096) } });
  const { result, called } = await run([fakeHook({ name: "h" })], big, {}, { inputKb: 1 });
  assert.deepEqual(called, []);
  assert.equal(recordOf(result, "h").outcome, "limit");
  assert.equal(recordOf(result, "h").detail, "input: 1 KiB of event (the policy's input_kb)");
  assert.equal(result.decision, "allow");
});
