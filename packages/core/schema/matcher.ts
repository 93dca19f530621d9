/**
 * Matcher regexes come from hook authors (a repository's project hooks among
 * them) and run on the host against every event. They are compiled with RE2
 * (npm `re2js`), which matches in time linear in the input: a pattern such as
 * `(a+)+$` cannot backtrack exponentially as it would in a JS RegExp.
 *
 * @module
 */
// Through `_re2.ts`: the bundled one-shot CLI loads the engine only for a
// pattern that needs it (`needsRegexEngine`), after awaiting `loadRe2()`.
import { re2 } from "./_re2.ts";

/** Longest matcher pattern accepted, in characters. */
export const MAX_MATCHER_CHARS = 1024;

/** A compiled matcher: `test(text)` is true when the pattern matches anywhere in `text`. */
export interface Matcher {
  test(text: string): boolean;
}

/**
 * Compiles `pattern` (RE2 syntax). Throws an `Error` naming the problem for
 * an invalid pattern.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { compileMatcher } from "./matcher.ts";
 * assert(compileMatcher("^(Shell|Bash)$").test("Bash"));
 * assert(!compileMatcher("(a+)+$").test("a".repeat(30) + "b"));
 * ```
 */
export function compileMatcher(pattern: string): Matcher {
  const literal = literalMatcher(pattern);
  if (literal !== null) return literal;
  const re = re2().RE2JS.compile(pattern);
  return { test: (text) => re.matcher(text).find() };
}

/**
 * True when `pattern` needs the RE2 engine, false when it is matched as
 * plain words (see below). `hookbox bundle` leaves the engine out of a
 * Worker none of whose matchers needs it.
 */
export function needsRegexEngine(pattern: string): boolean {
  return literalMatcher(pattern) === null;
}

/** True when a manifest's `matcher` has a pattern that {@linkcode needsRegexEngine}. */
export function matcherNeedsRegexEngine(
  matcher: { tool?: string | undefined; pattern?: string | undefined } | undefined,
): boolean {
  return [matcher?.tool, matcher?.pattern].some((p) => p !== undefined && needsRegexEngine(p));
}

/**
 * The common tool matcher — literal words, in one group when there are
 * several, each end optionally anchored (`^(Bash|Shell)$`, `^Read`, `Write`)
 * — matched as the string comparisons it means, with no regex engine to
 * load: RE2's `^` and `$` are the start and end of the text (no multi-line
 * mode), so `^(A|B)$` is membership, `^(A|B)` a prefix, `(A|B)$` a suffix
 * and `(A|B)` a substring. Checked against RE2 by a property test. Without a
 * group, `^A|B$` anchors only its first and last word, so such patterns (and
 * everything else) go to RE2.
 */
const LITERAL_WORDS = /^(\^?)(?:\(([\w-]+(?:\|[\w-]+)*)\)|([\w-]+))(\$?)$/;

function literalMatcher(pattern: string): Matcher | null {
  const m = LITERAL_WORDS.exec(pattern);
  if (m === null) return null;
  const words = (m[2] ?? m[3]!).split("|");
  const start = m[1] === "^";
  const end = m[4] === "$";
  if (start && end) {
    const set = new Set(words);
    return { test: (text) => set.has(text) };
  }
  if (start) return { test: (text) => words.some((w) => text.startsWith(w)) };
  if (end) return { test: (text) => words.some((w) => text.endsWith(w)) };
  return { test: (text) => words.some((w) => text.includes(w)) };
}
