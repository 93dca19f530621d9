/**
 * Fuzzing of every parser at the edges (a bounded run; `scripts/fuzz_parsers.ts`
 * runs a million cases per parser): event JSON, HOOK.md, hook stdout and plugin
 * bytes never crash the host and fail only with a coded error.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { HookboxError } from "../../packages/core/errors.ts";
import {
  eventJson,
  expectCoded,
  Finding,
  hookMd,
  hookStdout,
  pluginBytes,
  type Target,
} from "./_parsers.ts";

const SEED = Number(Deno.env.get("HOOKBOX_FUZZ_SEED") ?? 20261122);

function fuzz<T>(target: Target<T>, numRuns: number): Promise<void> | void {
  const check = target.check.bind(target);
  if (target === (pluginBytes as Target<unknown>)) {
    return fc.assert(fc.asyncProperty(target.input, async (x) => await check(x)), {
      numRuns,
      seed: SEED,
    });
  }
  fc.assert(fc.property(target.input, (x) => void check(x)), { numRuns, seed: SEED });
}

Deno.test("fuzz: event JSON fails only with EVENT_JSON_INVALID, EVENT_INVALID or JSON_TOO_DEEP", () =>
  fuzz(eventJson, 3000));

Deno.test("fuzz: HOOK.md fails only with HOOK_MANIFEST_INVALID", () => fuzz(hookMd, 1500));

Deno.test("fuzz: hook stdout is text, control fields or a coded invalid reading", () =>
  fuzz(hookStdout, 3000));

Deno.test("fuzz: plugin bytes load or fail with a PLUGIN_*/LIMIT_* code", () =>
  fuzz(pluginBytes, 3000));

Deno.test("fuzz: an uncoded error or an unexpected code is a finding, an expected code is not", () => {
  assert.throws(() => expectCoded(new TypeError("boom"), ["EVENT_INVALID"]), Finding);
  assert.throws(() => expectCoded(new RangeError("stack"), ["EVENT_INVALID"]), Finding);
  const coded = new HookboxError("HOOK_MANIFEST_INVALID", "bad");
  assert.throws(() => expectCoded(coded, ["EVENT_INVALID"]), /unexpected code/);
  assert.doesNotThrow(() => expectCoded(coded, ["HOOK_MANIFEST_INVALID"]));
});
