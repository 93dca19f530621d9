/**
 * The secret-redactor's detectors that do not run as one regex find exactly
 * what that regex finds: the JWT detector scans each `.eyJ` once instead of
 * trying the regex from every `eyJ` (which scanned the rest of a run of
 * `eyJ-eyJ-…` each time: quadratic, and 100 KB of it ran the hook out of fuel).
 */
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import fc from "fast-check";

const require = createRequire(import.meta.url);
const { DETECTORS } = require("../../plugins/lib/secret_patterns.js") as {
  DETECTORS: {
    kind: string;
    replaceIn?: (text: string, replace: (match: string) => string | null) => string;
  }[];
};
const jwt = DETECTORS.find((d) => d.kind === "jwt")!;

/** The regex the JWT detector stands for. */
const JWT = /\beyJ[A-Za-z0-9_-]{2,8192}\.eyJ[A-Za-z0-9_-]{2,16384}\.[A-Za-z0-9_-]{0,8192}/g;

/** Both ways, marking each match with its length and offset-free text. */
function both(text: string, keep = false) {
  const mark = (m: string) => keep ? m : `<${m.length}:${m.slice(0, 6)}>`;
  return [jwt.replaceIn!(text, mark), text.replace(JWT, mark)];
}

Deno.test("the JWT detector finds what its regex finds, on texts made of the parts that matter", () => {
  const piece = fc.constantFrom(
    "eyJ",
    ".",
    "-",
    "_",
    "a",
    "Z9",
    " ",
    "!",
    "é",
    ".eyJ",
    "eyJhbGciOiJIUzI1NiJ9",
  );
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 60 }), fc.boolean(), (pieces, keep) => {
      const [found, expected] = both(pieces.join(""), keep);
      assert.equal(found, expected);
    }),
    { numRuns: 3000 },
  );
});

Deno.test("the JWT detector keeps its regex's length bounds at their edges", () => {
  const run = (n: number) => "a".repeat(n);
  for (const first of [1, 2, 8192, 8193]) {
    for (const second of [1, 2, 16384, 16385]) {
      for (const sig of [0, 8192, 8193]) {
        for (const lead of ["", "x", "-", "x-", run(9000) + "-"]) {
          const text = `${lead}eyJ${run(first)}.eyJ${run(second)}.${run(sig)} tail`;
          const [found, expected] = both(text);
          assert.equal(found, expected, `${lead.length} ${first} ${second} ${sig}`);
        }
      }
    }
  }
  // A run of starts, one of which is close enough to the dot.
  const starts = `${"eyJ-".repeat(3000)}eyJab.eyJcd.ef`;
  const [found, expected] = both(starts);
  assert.equal(found, expected);
  assert.notEqual(found, starts);
});
