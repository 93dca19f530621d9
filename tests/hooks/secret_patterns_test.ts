/**
 * The secret-redactor's detectors that do not always run as one regex find
 * exactly what that regex finds (each picks the regex or its own scan by the
 * text; both are checked here): the JWT detector scans each `.eyJ` once instead of
 * trying the regex from every `eyJ` (which scanned the rest of a run of
 * `eyJ-eyJ-…` each time: quadratic, and 100 KB of it ran the hook out of
 * fuel), the URL password detector each `://` once instead of trying its
 * regex from every letter (20 characters scanned from each: 6 billion fuel
 * for a megabyte of `a-a-…`), and the assignment detector each run of name
 * characters once instead of trying its keywords at every character of the
 * run (5 billion fuel for a megabyte of one run).
 */
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import fc from "fast-check";

const require = createRequire(import.meta.url);
type Replace = (text: string, replace: (...args: never[]) => string) => string;
const lib = require("../../plugins/lib/secret_patterns.js") as {
  DETECTORS: { kind: string; re: RegExp; replaceIn: (...args: unknown[]) => string }[];
  replaceJwts: Replace;
  replaceUrlCredentials: Replace;
  replaceAssignments: Replace;
};
/** A detector's scan and its `replaceIn` (which picks the scan or the regex) agreeing. */
const scanned = (kind: string, scan: Replace): Replace => (text, replace) => {
  const detector = lib.DETECTORS.find((d) => d.kind === kind)!;
  const found = scan(text, replace);
  assert.equal(detector.replaceIn(text, replace, detector.re), found);
  return found;
};
const jwt = { replaceIn: scanned("jwt", lib.replaceJwts) };
const url = { replaceIn: scanned("url_credentials", lib.replaceUrlCredentials) };

/** The regex the URL password detector stands for. */
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]{1,20}:\/\/[^\s:@/]{1,100}:)([^\s@/]{1,200})@/gi;
const assignment = { replaceIn: scanned("password", lib.replaceAssignments) };

/** The regex the assignment detector stands for. */
const ASSIGNMENT = new RegExp(
  "(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]*?(?:passw(?:or)?d|secret|api[_-]?key|access[_-]?key|" +
    "(?:access|auth|refresh|bearer)[_-]?token|private[_-]?key|\\btoken)[A-Za-z0-9_.-]{0,40}" +
    `["']?)([ \\t]*[:=][ \\t]*)(?!\\[REDACTED)("[^"\\n]{0,500}"|'[^'\\n]{0,500}'|` +
    `[^\\s"',;&}]{1,500})`,
  "gi",
);

/** The regex the JWT detector stands for. */
const JWT = /\beyJ[A-Za-z0-9_-]{2,8192}\.eyJ[A-Za-z0-9_-]{2,16384}\.[A-Za-z0-9_-]{0,8192}/g;

/** Both ways, marking each match with its length and offset-free text. */
function both(text: string, keep = false) {
  const mark = (m: string) => keep ? m : `<${m.length}:${m.slice(0, 6)}>`;
  return [jwt.replaceIn(text, mark), text.replace(JWT, mark)];
}

/**
 * Checks `scan` against `regex` on 5,000 texts of up to `most` of `pieces`;
 * more than 300 of them must hold a match.
 */
function agrees(
  scan: Replace,
  regex: RegExp,
  mark: (match: string, ...groups: string[]) => string,
  most: number,
  pieces: string[],
) {
  let matched = 0;
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: most }), (parts) => {
      const text = parts.join("");
      const expected = text.replace(regex, mark);
      if (expected !== text) matched++;
      assert.equal(scan(text, mark as never), expected);
    }),
    { numRuns: 5000 },
  );
  assert.ok(matched > 300, `${matched} texts held a match`);
}

Deno.test("the JWT detector finds what its regex finds, on texts made of the parts that matter", () => {
  let matched = 0;
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
    "eyJab.eyJcd.ef",
    "eyJab.eyJcd.",
    "eyJa.eyJ",
    "-eyJxy.",
  );
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 60 }), fc.boolean(), (pieces, keep) => {
      const [found, expected] = both(pieces.join(""), keep);
      if (!keep && expected !== pieces.join("")) matched++;
      assert.equal(found, expected);
    }),
    { numRuns: 3000 },
  );
  assert.ok(matched > 300, `${matched} texts held a match`);
});

Deno.test("the URL password detector finds what its regex finds, groups included", () => {
  const mark = (m: string, prefix: string, pass: string) => `<${m.length}|${prefix}|${pass}>`;
  agrees(url.replaceIn, URL_PASSWORD, mark, 60, [
    "://",
    ":",
    "@",
    "/",
    " ",
    "\t",
    "\u00a0",
    "\u0001",
    "-",
    ".",
    "+",
    "_",
    "a",
    "Zz",
    "9",
    "é",
    "https",
    "https://u:p@",
    "x://a:b@",
    "ftp://",
    "u:p@",
    "a:b:c@",
  ]);
  // The bounds: a scheme of 1, 20 and 21 characters after its letter, a user of 100 and 101,
  // a password of 200 and 201, after a word character or not.
  for (const scheme of [1, 20, 21]) {
    for (const user of [1, 100, 101]) {
      for (const pass of [1, 200, 201]) {
        for (const lead of ["", "x", "-", "_", "9."]) {
          const text = `${lead}h${"t".repeat(scheme)}://${"u".repeat(user)}:${"p".repeat(pass)}@h`;
          assert.equal(url.replaceIn(text, mark as never), text.replace(URL_PASSWORD, mark));
        }
      }
    }
  }
});

Deno.test("the assignment detector finds what its regex finds, groups included", () => {
  const mark = (m: string, key: string, sep: string, value: string) =>
    `<${m.length}|${key}|${sep}|${value}>`;
  agrees(assignment.replaceIn, ASSIGNMENT, mark, 40, [
    "password",
    "PassWD",
    "secret",
    "api_key",
    "apikey",
    "access-key",
    "refresh_token",
    "Bearer-Token",
    "token",
    "private.key",
    "key",
    "db_",
    "x",
    ".",
    "-",
    "_",
    "9",
    "a".repeat(20),
    "=",
    ": ",
    ":",
    "\t",
    " ",
    '"',
    "'",
    "\n",
    "hunter22",
    '"s3cr3t-value"',
    "[REDACTED:x]",
    ",",
    "é",
  ]);
  // The bounds: 40 name characters after the keyword and 41; 500 and 501 of a value.
  for (const after of [0, 40, 41]) {
    for (const value of [1, 500, 501]) {
      for (const lead of ["", "x", "-", '"', "a".repeat(100)]) {
        for (const v of ["v".repeat(value), `"${"v".repeat(value)}"`]) {
          const text = `${lead}api_key${"k".repeat(after)} = ${v};`;
          assert.equal(assignment.replaceIn(text, mark as never), text.replace(ASSIGNMENT, mark));
        }
      }
    }
  }
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
