/**
 * The bundled CLI's on-demand zod and RE2 (`_zod_on_demand.ts`,
 * `_re2_on_demand.ts`, swapped in by `scripts/build_cli.ts`): unusable until
 * loaded, with an internal error naming the missing await rather than a
 * TypeError; usable once the load resolved.
 */
import assert from "node:assert/strict";
import { isHookboxError } from "../../../packages/core/errors.ts";
import * as zodOnDemand from "../../../packages/core/schema/_zod_on_demand.ts";
import * as re2OnDemand from "../../../packages/core/schema/_re2_on_demand.ts";

Deno.test("on-demand zod and RE2 refuse use before their load resolved, then work", async () => {
  const early = [() => zodOnDemand.zod(), () => re2OnDemand.re2()];
  for (const use of early) {
    assert.throws(use, (err) => isHookboxError(err, "INTERNAL") && /before load/.test(err.message));
  }
  assert.deepEqual([zodOnDemand.zodLoaded(), re2OnDemand.re2Loaded()], [false, false]);
  const pending = zodOnDemand.loadZod();
  assert.equal(zodOnDemand.loadZod(), pending, "one load, shared");
  await Promise.all([pending, re2OnDemand.loadRe2()]);
  assert.deepEqual([zodOnDemand.zodLoaded(), re2OnDemand.re2Loaded()], [true, true]);
  assert.equal(zodOnDemand.zod().string().parse("x"), "x");
  assert.ok(re2OnDemand.re2().RE2JS.compile("a+b").matcher("xaab").find());
});
