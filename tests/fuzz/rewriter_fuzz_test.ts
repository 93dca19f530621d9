/**
 * Generated-module testing of the rewriter (a bounded run; `scripts/fuzz_rewriter.ts`
 * runs longer): random valid modules behave the same before and after
 * instrumentation, and stop for fuel with one unit too little.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { addFigures, checkRewrite, noFigures } from "./_differential.ts";
import { generateModule, moduleStream } from "./_module_gen.ts";
import { wat } from "../rewriter/_wat.ts";

const SEED = Number(Deno.env.get("HOOKBOX_FUZZ_SEED") ?? 20261122);

Deno.test("rewriter: 1000 generated modules validate, behave like the original and stop for fuel", () => {
  const seen = noFigures();
  fc.assert(
    fc.property(moduleStream(), (stream) => {
      const figures = checkRewrite(wat(generateModule(stream)));
      addFigures(seen, figures);
    }),
    { numRuns: 1000, seed: SEED },
  );
  // The generator reaches every ending the properties are about.
  assert.ok(seen.returned > 300, `returned ${seen.returned}`);
  assert.ok(seen.trapped > 100, `trapped ${seen.trapped}`);
  assert.ok(seen.thrown > 100, `thrown ${seen.thrown}`);
  assert.ok(seen.fuelStops > 200, `fuel stops ${seen.fuelStops}`);
  assert.ok(seen.skipped < 100, `skipped ${seen.skipped}`);
});

Deno.test("rewriter: the differential check catches a module that was not rewritten faithfully", () => {
  const text = generateModule([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
  const good = wat(text);
  checkRewrite(good);
  // The same module with its function answering 1 instead of 0 is a different program.
  const bad = wat(
    text.replace(
      /\(i32\.const 0\)\)\n {2}\(func \(export "run"\)/,
      '(i32.const 1))\n  (func (export "run")',
    ),
  );
  assert.notDeepEqual(bad, good);
  assert.throws(() => checkRewrite(good, bad), /ending/);
});
