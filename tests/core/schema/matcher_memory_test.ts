import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { KEPT_INSTRUCTIONS } from "../../../packages/core/schema/matcher.ts";

const PROBE = fileURLToPath(new URL("./_matcher_memory_probe.ts", import.meta.url));

Deno.test("manifests keep no more compiled programs than the patterns kept compiled", async () => {
  // 600 manifests × ~2,000 instructions: ~1.2M instructions, ~215 MB of programs if each manifest
  // kept its own (a tenant's thousand hooks have two patterns each, and a service serves many
  // tenants); the kept patterns hold at most KEPT_INSTRUCTIONS of them (~75 MiB at worst).
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--v8-flags=--expose-gc", PROBE, "600"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  const probe = JSON.parse(new TextDecoder().decode(out.stdout));
  assert.ok(probe.instructions > 4 * KEPT_INSTRUCTIONS, `${probe.instructions} instructions`);
  assert.ok(probe.held < 100 * 1024 * 1024, `${(probe.held / 2 ** 20).toFixed(0)} MiB held`);
  // Each manifest still answers as its pattern says (compiled again where it was let go).
  assert.equal(probe.right, 600);
  assert.equal(probe.keepsManifests, 600);
});
