/**
 * Matchers on 1 MiB texts: the host CPU a matcher's regex takes, as
 * hookbox runs it (`testWithin`, counted, on one event's budget
 * `MATCHER_STEPS_PER_EVENT`) beside RE2's plain search with groups
 * (`matcher().find()`, which never uses the DFA on a long text), per
 * pattern and text, with the steps charged and the host time per step (the
 * figure the budget's bound rests on: budget × worst ns per step).
 *
 *   deno run -A scripts/bench_matchers.ts [--plain-limit-ms 3000]
 *
 * Patterns that defeat RE2's DFA take seconds in the plain search; it is run
 * on a 64 KiB slice of their text and scaled up when a first try on that
 * slice takes longer than `--plain-limit-ms` ÷ 16.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { RE2JS } from "re2js";
import { compileMatcher, MATCHER_STEPS_PER_EVENT } from "../packages/core/schema/matcher.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { "plain-limit-ms": { type: "string", default: "3000" } },
});
const PLAIN_LIMIT_MS = Number(values["plain-limit-ms"]);

function seeded(alphabet: string, length: number): string {
  let seed = 12345;
  const out: string[] = [];
  for (let i = 0; i < length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    out.push(alphabet[(seed >>> 8) % alphabet.length]!);
  }
  return out.join("");
}

const MIB = 1 << 20;
const TEXTS: Record<string, string> = {
  "a/b": seeded("ab", MIB),
  prose: seeded("abcdefghijklmnopqrstuvwxyz     ", MIB),
  "tool JSON": JSON.stringify({ command: "ls -la /tmp && echo hi ".repeat(MIB / 23) }),
};
const PATTERNS = [
  "(?i)(curl|wget).*\\|\\s*(ba)?sh",
  "(?i)(password|secret|token|api[_-]?key)\\s*[:=]",
  "(?s).*(?:a.{30}){10}",
  "a[ab]{25}[^ab]",
  "(?:a|b){0,30}a[ab]{25}[^ab]",
  "\\pL{0,500}a[ab]{25}[^ab]",
  "[a-z]{0,900}a[a-z]{30}[^a-z]",
];

function ms(f: () => unknown): number {
  const t = performance.now();
  f();
  return performance.now() - t;
}

console.log(
  `hookbox matchers: 1 MiB texts, one event's budget ${MATCHER_STEPS_PER_EVENT} steps\n`,
);
console.log(
  "| pattern | text | plain find() | counted, one event's budget | answer | steps | ns per step |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- |");
let worst = 0;
for (const pattern of PATTERNS) {
  for (const [name, text] of Object.entries(TEXTS)) {
    const plainRe = RE2JS.compile(pattern);
    const slice = text.slice(0, MIB / 16);
    const trial = ms(() => RE2JS.compile(pattern).matcher(slice).find());
    const plain = trial * 16 > PLAIN_LIMIT_MS
      ? `~${(trial * 16 / 1000).toFixed(1)} s (64 KiB × 16)`
      : `${ms(() => plainRe.matcher(text).find()).toFixed(1)} ms`;
    // A fresh matcher each time: its DFA states are built within the timed search.
    const budget = { left: MATCHER_STEPS_PER_EVENT };
    let answer: boolean | undefined;
    const fresh = compileMatcher(pattern, { keep: false });
    const counted = ms(() => answer = fresh.testWithin(text, budget));
    const steps = MATCHER_STEPS_PER_EVENT - budget.left;
    const perStep = counted * 1e6 / Math.min(steps, MATCHER_STEPS_PER_EVENT);
    worst = Math.max(worst, perStep);
    console.log(
      `| \`${pattern.replaceAll("|", "\\|")}\` | ${name} | ${plain} | ${counted.toFixed(1)} ms | ${
        answer === undefined ? "cut: runs the hook" : answer
      } | ${steps >= MATCHER_STEPS_PER_EVENT ? "budget" : steps.toLocaleString("en")} | ${
        perStep.toFixed(1)
      } |`,
    );
  }
}
console.log(
  `\nworst ${worst.toFixed(1)} ns per step: one event's matchers take at most ~${
    (worst * MATCHER_STEPS_PER_EVENT / 1e6).toFixed(0)
  } ms of host CPU`,
);

const SLOW_TO_COMPILE = [
  "\\p{Greek}{0,900}x",
  "[\\pL\\pN\\pP\\pS]{1,990}",
  "(?i)[a-z]{0,1000}",
  "(?:a{0,30}){30}",
  "(?i)(?:abc|def|ghi){60}",
];
console.log("\n| pattern | compile | steps charged | ns per step |\n| --- | --- | --- | --- |");
let worstCompile = 0;
for (const pattern of [...PATTERNS, ...SLOW_TO_COMPILE]) {
  compileMatcher(pattern, { keep: false }); // the engine's code warmed up
  let steps = 0;
  const each = ms(() => {
    for (let i = 0; i < 5; i++) steps = compileMatcher(pattern, { keep: false }).compileSteps;
  }) / 5;
  const perStep = each * 1e6 / steps;
  worstCompile = Math.max(worstCompile, perStep);
  console.log(
    `| \`${pattern.replaceAll("|", "\\|")}\` | ${each.toFixed(2)} ms | ${
      steps.toLocaleString("en")
    } | ${perStep.toFixed(1)} |`,
  );
}
console.log(`\nworst ${worstCompile.toFixed(1)} ns per step charged for a compile`);
