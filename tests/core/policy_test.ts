import assert from "node:assert/strict";
import { effectiveLimits, resolvePolicy } from "../../packages/core/policy.ts";
import { parseHookMd } from "../../packages/core/hook/frontmatter.ts";

const manifest = parseHookMd(
  "---\nname: a\ndescription: d\ntrigger: pre-tool-call\nlimits:\n  fuel: 5000000\n  memory_mb: 8\n---\n",
).manifest;

Deno.test("`effectiveLimits()` lowers hook limits to whole-number policy ceilings", () => {
  const limits = effectiveLimits(manifest, resolvePolicy({ maxFuel: 1500.7, maxMemoryMb: 2.5 }));
  assert.equal(limits.fuel, 1500);
  assert.equal(limits.memoryMb, 2);
});

Deno.test("`effectiveLimits()` never raises a hook's own limits", () => {
  const limits = effectiveLimits(manifest, resolvePolicy({ maxFuel: 1e12, maxMemoryMb: 4096 }));
  assert.equal(limits.fuel, 5_000_000);
  assert.equal(limits.memoryMb, 8);
});

Deno.test("`resolvePolicy()` rejects a bad ceiling with a TypeError naming it", () => {
  assert.throws(
    () => resolvePolicy({ maxFuel: -1 }),
    (e: Error) => e instanceof TypeError && /policy\.maxFuel/.test(e.message),
  );
  assert.throws(() => resolvePolicy({ allowSubprocess: "yes" as unknown as boolean }), TypeError);
});

Deno.test("`effectiveLimits()` with fuelPerMs turns the timeout into a fuel budget (edge Workers)", () => {
  const timed = parseHookMd(
    "---\nname: a\ndescription: d\ntrigger: pre-tool-call\ntimeout: 200\nlimits:\n  fuel: 5000000\n---\n",
  ).manifest;
  assert.equal(effectiveLimits(timed, resolvePolicy({ fuelPerMs: 1000 })).fuel, 200_000);
  assert.equal(effectiveLimits(timed, resolvePolicy({ fuelPerMs: 1e6 })).fuel, 5_000_000);
  assert.equal(effectiveLimits(timed, resolvePolicy({})).fuel, 5_000_000, "unset: no cap");
  // The policy's own timeout ceiling counts, not only the hook's.
  const capped = resolvePolicy({ fuelPerMs: 1000, maxTimeoutMs: 100 });
  assert.equal(effectiveLimits(timed, capped).fuel, 100_000);
  assert.throws(() => resolvePolicy({ fuelPerMs: 0 }), /policy\.fuelPerMs/);
});
