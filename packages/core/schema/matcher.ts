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
import {
  dfaCacheBytes,
  forgetCache,
  meteredTest,
  programSize,
  type StepBudget,
} from "./_re2_meter.ts";

export type { StepBudget } from "./_re2_meter.ts";

/** Longest matcher pattern accepted, in characters. */
export const MAX_MATCHER_CHARS = 1024;

/**
 * Steps the matchers of one event may take together (about one character
 * scanned each; `_re2_meter.ts`): 8 MiB of text through the engine's DFA,
 * about 100 ms of host CPU at worst (`scripts/bench_matchers.ts`).
 */
export const MATCHER_STEPS_PER_EVENT = 1 << 23;

/** A compiled matcher: `test(text)` is true when the pattern matches anywhere in `text`. */
export interface Matcher {
  test(text: string): boolean;
  /**
   * `test` within `budget`, which it spends: undefined when the budget ran
   * out before the answer was known.
   */
  testWithin(text: string, budget: StepBudget): boolean | undefined;
  /**
   * Bytes the engine holds for it in cached DFA states, by the engine's
   * own estimate (at most `DFA_BYTES`; 0 for plain words; undefined when the
   * engine's internals are not there to read).
   */
  cacheBytes(): number | undefined;
  /** Instructions of its compiled program; 0 for plain words. */
  readonly instructions: number;
  /** Steps its compile is charged ({@linkcode compileWithin}); 0 for plain words. */
  readonly compileSteps: number;
  /**
   * True once the patterns kept compiled let it go ({@linkcode KEPT_INSTRUCTIONS}):
   * its program is freed, and each `test` or `testWithin` looks the pattern
   * up again (compiling it again, charged, if it is not kept).
   */
  readonly released: boolean;
}

/** A regex {@linkcode Matcher} as the kept patterns hold it. */
interface KeptMatcher extends Omit<Matcher, "released"> {
  released: boolean;
  /** Searched since the kept patterns last looked (a second chance before it is let go). */
  used: boolean;
  /** Frees its program. */
  release(): void;
}

/**
 * Compiles `pattern` (RE2 syntax), or returns the matcher compiled for it
 * lately (one matcher, its engine's caches included; `keep: false` compiles
 * a fresh one and keeps nothing). Throws an `Error` naming the problem for
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
export function compileMatcher(pattern: string, options: { keep?: boolean } = {}): Matcher {
  if (options.keep === false) return literalMatcher(pattern) ?? regexMatcher(pattern);
  const known = compiledMatcher(pattern);
  if (known !== undefined) return known;
  const matcher = literalMatcher(pattern) ?? regexMatcher(pattern);
  keptInstructions += matcher.instructions;
  kept.set(pattern, matcher);
  // The oldest go first; one searched since the last look gets a second chance.
  let chances = kept.size;
  while (kept.size > KEPT_MATCHERS || keptInstructions > KEPT_INSTRUCTIONS) {
    const [oldest, dropped] = kept.entries().next().value!;
    kept.delete(oldest);
    if (dropped === matcher) { // the one just compiled stays, whatever its size
      kept.set(oldest, dropped);
      break;
    }
    if (dropped.used && chances-- > 0) {
      dropped.used = false;
      kept.set(oldest, dropped);
      continue;
    }
    keptInstructions -= dropped.instructions;
    dropped.release();
  }
  return matcher;
}

/**
 * Patterns compiled lately: compiling one can take milliseconds
 * (`\p{Greek}{0,900}x`: ~3 ms, its counted repetition written out), and a
 * process sees the same ones again and again (a hook's manifest validated,
 * then matched; the service's hooks loaded again after every upload). They
 * are the only compiled programs kept: a program takes ~300 bytes of heap an
 * instruction, and a manifest that holds its matchers (`manifestMatcher`)
 * holds them through here, so that a thousand hooks of each of many tenants
 * cannot keep gigabytes. One let go is released (its program freed).
 */
const kept = new Map<string, KeptMatcher>();
let keptInstructions = 0;
/** Most patterns {@linkcode compileMatcher} keeps compiled. */
export const KEPT_MATCHERS = 1_024;
/**
 * Most instructions the patterns it keeps may have together (a program
 * takes ~300 bytes of heap an instruction: ~75 MiB).
 */
export const KEPT_INSTRUCTIONS = 1 << 18;

/** `pattern` as {@linkcode compileMatcher} compiled it lately, or undefined. */
export function compiledMatcher(pattern: string): Matcher | undefined {
  const found = kept.get(pattern);
  if (found !== undefined) found.used = true;
  return found;
}

/**
 * Steps one compile of a regex pattern is charged, and steps per
 * instruction of its program (`scripts/bench_matchers.ts`: up to ~2–4 µs an
 * instruction, ~0.1 ms a compile, charged at no more than a search's ~8 ns a
 * step).
 */
export const COMPILE_STEPS = { base: 10_000, perInstruction: 512 };

/**
 * {@linkcode compileMatcher} of `pattern` within `budget`: one kept
 * compiled, or plain words, costs nothing; another is compiled while the
 * budget has steps left, and charged its program's size
 * ({@linkcode COMPILE_STEPS}); undefined when none are left.
 */
export function compileWithin(pattern: string, budget: StepBudget): Matcher | undefined {
  const known = compiledMatcher(pattern);
  if (known !== undefined) return known;
  if (budget.left <= 0 && !LITERAL_WORDS.test(pattern)) return undefined;
  const matcher = compileMatcher(pattern);
  budget.left -= matcher.compileSteps;
  return matcher;
}

function regexMatcher(pattern: string): KeptMatcher {
  let re: ReturnType<ReturnType<typeof re2>["RE2JS"]["compile"]> | null = re2().RE2JS.compile(
    pattern,
  );
  // Without the engine's internals: as if each character were ten instructions.
  const instructions = programSize(re) ?? 10 * pattern.length;
  // `test` asks for no groups, so the engine may answer from its DFA (a
  // `matcher().find()` runs the NFA or the backtracker on every character).
  const matcher: KeptMatcher = {
    test(text) {
      if (re === null) return compileMatcher(pattern).test(text);
      matcher.used = true;
      return re.test(text);
    },
    testWithin(text, budget) {
      if (re === null) return compileWithin(pattern, budget)?.testWithin(text, budget);
      matcher.used = true;
      return meteredTest(re, pattern, text, budget);
    },
    cacheBytes: () => re === null ? 0 : dfaCacheBytes(re),
    instructions,
    compileSteps: COMPILE_STEPS.base + COMPILE_STEPS.perInstruction * instructions,
    released: false,
    used: false,
    release() {
      forgetCache(re);
      re = null;
      matcher.released = true;
    },
  };
  return matcher;
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

function literalMatcher(pattern: string): KeptMatcher | null {
  const m = LITERAL_WORDS.exec(pattern);
  if (m === null) return null;
  const words = (m[2] ?? m[3]!).split("|");
  const start = m[1] === "^";
  const end = m[4] === "$";
  const test = start && end
    ? ((set) => (text: string) => set.has(text))(new Set(words))
    : start
    ? (text: string) => words.some((w) => text.startsWith(w))
    : end
    ? (text: string) => words.some((w) => text.endsWith(w))
    : (text: string) => words.some((w) => text.includes(w));
  // A substring search per word is a scan of the text per word (at a small
  // fraction of the regex engine's cost per character).
  const scans = !start && !end ? words.length : 0;
  return {
    test,
    testWithin(text, budget) {
      budget.left -= 1 + Math.ceil(scans * text.length / 8);
      return budget.left < 0 ? undefined : test(text);
    },
    cacheBytes: () => 0,
    instructions: 0,
    compileSteps: 0,
    released: false, // holds no program: kept or let go, it answers alike
    used: false,
    release() {},
  };
}
