/**
 * Fuzzes every parser at hookbox's edges with fast-check (targets in
 * `tests/fuzz/_parsers.ts`): event JSON, HOOK.md, hook stdout, plugin bytes.
 * Each case must succeed or fail with a coded `HookboxError`; anything else
 * (another exception, a crash, an unknown code) is a finding.
 *
 *   deno run -A scripts/fuzz_parsers.ts [--cases 1000000] [--seconds 1500] [--seed N]
 *
 * `--cases` is per parser; `--seconds` bounds the whole run (the time is
 * shared out between the parsers still to run). Prints cases, time and rate
 * per parser; on a finding, the shrunk input, and exits 1.
 *
 * @module
 */
import { parseArgs } from "node:util";
import fc from "fast-check";
import { type Target, TARGETS } from "../tests/fuzz/_parsers.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    cases: { type: "string", default: "1000000" },
    seconds: { type: "string", default: "1500" },
    seed: { type: "string" },
  },
});
const cases = Number(values.cases);
const deadline = performance.now() + Number(values.seconds) * 1000;
const seed = values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed);

console.log(`seed ${seed}, ${cases} cases per parser`);
let total = 0;
let failed = false;
for (const [i, target] of TARGETS.entries()) {
  const budget = (deadline - performance.now()) / (TARGETS.length - i);
  const started = performance.now();
  let ran = 0;
  const check = (target as Target<unknown>).check.bind(target);
  const options = {
    numRuns: cases,
    seed,
    interruptAfterTimeLimit: Math.max(1000, budget),
    markInterruptAsFailure: false,
  };
  const details = target.name === "plugin bytes"
    ? await fc.check(
      fc.asyncProperty(target.input as fc.Arbitrary<unknown>, async (x) => {
        ran++;
        await check(x);
      }),
      options,
    )
    : fc.check(
      fc.property(target.input as fc.Arbitrary<unknown>, (x) => {
        ran++;
        void check(x);
      }),
      options,
    );
  const seconds = (performance.now() - started) / 1000;
  total += details.numRuns;
  const rate = (details.numRuns / seconds).toFixed(0);
  const note = details.interrupted ? " (stopped by the time limit)" : "";
  console.log(
    `  ${target.name.padEnd(13)} ${details.numRuns} cases in ${
      seconds.toFixed(1)
    } s, ${rate}/s${note}`,
  );
  if (details.failed) {
    failed = true;
    console.error(`  FINDING in ${target.name} after ${ran} calls: ${details.errorInstance}`);
    console.error(`  input: ${fc.stringify(details.counterexample)}`);
  }
}
console.log(`${total} cases, ${failed ? "with findings" : "no finding"}`);
if (failed) Deno.exit(1);
