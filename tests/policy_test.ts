import assert from "node:assert/strict";
import { effectiveLimits, resolvePolicy } from "../src/policy.ts";
import { parseHookMd } from "../src/hook/frontmatter.ts";

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
