/**
 * Matcher regexes come from hook authors (a repository's project hooks among
 * them) and run on the host against every event. They are compiled with RE2
 * (npm `re2js`), which matches in time linear in the input: a pattern such as
 * `(a+)+$` cannot backtrack exponentially as it would in a JS RegExp.
 *
 * @module
 */
import { RE2JS } from "re2js";

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
  const re = RE2JS.compile(pattern);
  return { test: (text) => re.matcher(text).find() };
}
