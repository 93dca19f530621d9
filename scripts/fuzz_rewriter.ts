/**
 * Long run of the rewriter's generated-module test (the test suite runs a
 * bounded one): random valid modules from `tests/fuzz/_module_gen.ts`, each
 * checked by `tests/fuzz/_differential.ts` — (a) the rewritten module
 * validates, (b) with enough fuel it behaves exactly like the original
 * (results, traps, exceptions, memory, globals, dirty pages; the exact fuel it
 * used still suffices), (c) with one unit less it stops for fuel.
 *
 *   deno run -A scripts/fuzz_rewriter.ts [--runs 20000] [--seconds 600] [--seed N]
 *
 * Prints the figures; on a failure, the shrunk module as WAT, and exits 1.
 *
 * @module
 */
import { parseArgs } from "node:util";
import fc from "fast-check";
import { addFigures, checkRewrite, noFigures } from "../tests/fuzz/_differential.ts";
import { generateModule, moduleStream } from "../tests/fuzz/_module_gen.ts";
import { wat } from "../tests/rewriter/_wat.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    runs: { type: "string", default: "20000" },
    seconds: { type: "string", default: "600" },
    seed: { type: "string" },
  },
});
const runs = Number(values.runs);
const seconds = Number(values.seconds);
const seed = values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed);

const seen = noFigures();
let modules = 0;
let bytes = 0;
const started = performance.now();
const details = fc.check(
  fc.property(moduleStream(), (stream) => {
    const module = wat(generateModule(stream));
    const figures = checkRewrite(module);
    modules++;
    bytes += module.byteLength;
    addFigures(seen, figures);
  }),
  { numRuns: runs, seed, interruptAfterTimeLimit: seconds * 1000, markInterruptAsFailure: false },
);
const elapsed = (performance.now() - started) / 1000;

console.log(
  `seed ${seed}: ${modules} modules (${details.numRuns} runs) in ${elapsed.toFixed(1)} s`,
);
console.log(
  `  ${(modules / elapsed).toFixed(0)} modules/s, ${(bytes / modules).toFixed(0)} bytes/module`,
);
console.log(
  `  ${seen.calls} calls: ${seen.returned} returned, ${seen.trapped} trapped, ` +
    `${seen.thrown} threw; ${seen.fuelStops} fuel stops with one unit too little; ` +
    `${seen.skipped} modules over the per-call budget skipped`,
);
if (details.interrupted) console.log(`  stopped by the ${seconds} s time limit`);
if (details.failed) {
  const [stream] = details.counterexample ?? [[]];
  console.error(`FAILED: ${details.errorInstance}`);
  console.error(generateModule(stream));
  Deno.exit(1);
}
console.log("  no divergence");
