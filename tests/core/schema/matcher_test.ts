/**
 * Matchers: literal-word patterns are compared as strings, everything else
 * goes to RE2. The shortcut must answer exactly as RE2 would, on any text.
 */
import { deepStrictEqual as assertEquals, throws } from "node:assert/strict";
import fc from "fast-check";
import { RE2JS } from "re2js";
import { compileMatcher } from "../../../packages/core/schema/matcher.ts";

const re2 = (pattern: string, text: string) => RE2JS.compile(pattern).matcher(text).find();

/** Words from a small alphabet, so texts often contain, start or end with them. */
const word = fc.stringMatching(/^[ab_1-]{1,3}$/);
const literalPattern = fc.record({
  words: fc.array(word, { minLength: 1, maxLength: 4 }),
  group: fc.boolean(),
  start: fc.boolean(),
  end: fc.boolean(),
}).map(({ words, group, start, end }) => {
  const body = group || words.length > 1 ? `(${words.join("|")})` : words[0]!;
  return `${start ? "^" : ""}${body}${end ? "$" : ""}`;
});
const text = fc.stringMatching(/^[ab_1\-\nxé]{0,8}$/);

Deno.test("literal-word matchers answer as RE2 does, anchored or not, on any text", () => {
  fc.assert(
    fc.property(
      literalPattern,
      fc.array(text, { minLength: 1, maxLength: 8 }),
      (pattern, texts) => {
        const matcher = compileMatcher(pattern);
        for (const t of texts) {
          assertEquals(
            matcher.test(t),
            re2(pattern, t),
            `${pattern} on ${JSON.stringify(t)}`,
          );
        }
      },
    ),
    { numRuns: 3000 },
  );
});

Deno.test("patterns outside the literal form still follow RE2, including ungrouped alternations", () => {
  const cases: [string, string, boolean][] = [
    ["^a|b$", "ab", true], // ^a, or b$: not "exactly a or b"
    ["^a|b$", "xa", false],
    ["^a|b$", "xb", true],
    ["^(Bash|Shell)$", "Bash\n", false],
    ["^Bash", "Bashful", true],
    ["(?i)^bash$", "BASH", true],
    ["^B.sh$", "Bash", true],
    ["^(a|b)+$", "abab", true],
  ];
  for (const [pattern, t, expected] of cases) {
    assertEquals(compileMatcher(pattern).test(t), expected, `${pattern} on ${JSON.stringify(t)}`);
    assertEquals(re2(pattern, t), expected);
  }
  throws(() => compileMatcher("(a"), /missing/i);
});
