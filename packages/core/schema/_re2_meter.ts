/**
 * Counts the work RE2 (npm `re2js`) does for a matcher and stops it past a
 * budget. RE2 matches in time linear in the text, but the factor is the
 * pattern's program: a pattern that defeats the engine's DFA (say
 * `\pL{0,500}a[ab]{25}[^ab]`) falls back to its NFA, which steps every live
 * thread at every character — 16–20 s of host CPU for one 1 MiB event, on
 * the thread that answers everyone's requests, past an agent's hook timeout.
 *
 * `re2js` has no budget of its own, so the three places its search spends
 * time are wrapped, once, on the engine's own prototypes (reached from a
 * compiled pattern; the package's version is pinned in deno.json):
 *
 * - the DFA's scan: a step per character;
 * - a DFA state not yet cached: a step per NFA instruction it holds, times
 *   {@linkcode STATE_WEIGHT};
 * - the NFA, which the DFA gives up to: characters × instructions ×
 *   {@linkcode NFA_WEIGHT}, charged before it starts.
 *
 * The literal prefilter, the backtracker (texts short enough for a 256 Kibit
 * visited set) and the one-pass matcher are linear with small factors: each
 * search is charged an eighth of a step per character for them. Should a
 * later `re2js` lack those internals, every search is charged its worst
 * case up front instead (characters × pattern length × `NFA_WEIGHT`): the
 * bound holds either way (`matcher_budget_test.ts` checks both).
 *
 * @module
 */

/** Steps charged per NFA instruction of a DFA state built during a search. */
export const STATE_WEIGHT = 128;
/** Steps charged per character per instruction when the NFA runs. */
export const NFA_WEIGHT = 4;

/** What is left of a budget of steps; shared by the searches of one event. */
export interface StepBudget {
  left: number;
}

/** Thrown inside the engine when the budget is spent; caught by {@linkcode meteredTest}. */
class Spent extends Error {}
const SPENT = new Spent("matcher step budget spent");

let meter: StepBudget | null = null;

function spend(steps: number): void {
  if (meter !== null && (meter.left -= steps) < 0) throw SPENT;
}

/** The search entry points of a compiled pattern, as `re2js` 2.x lays them out. */
interface Internals {
  dfaProto: Record<string, unknown>;
  engineProto: Record<string, unknown>;
}

// deno-lint-ignore no-explicit-any
type Loose = any;

/** undefined: not tried yet; null: the internals are not there (charge worst cases). */
let wrapped: boolean | undefined;

function internalsOf(re: Loose): Internals | null {
  const engine = re?.re2Input;
  if (engine === null || typeof engine !== "object") return null;
  const dfa = engine.dfa;
  if (dfa === null || typeof dfa !== "object") return null;
  const dfaProto = Object.getPrototypeOf(dfa);
  const engineProto = Object.getPrototypeOf(engine);
  if (
    typeof dfaProto?.run !== "function" || typeof dfaProto.step !== "function" ||
    typeof engineProto?.doExecuteNFA !== "function" || typeof engine.prog?.numInst !== "function"
  ) return null;
  return { dfaProto, engineProto };
}

/** Makes `proto[name]` charge `cost(this, ...args)` steps before it runs. */
function charging(
  proto: Record<string, unknown>,
  name: string,
  cost: (self: Loose, ...args: Loose[]) => number,
): void {
  const original = proto[name] as (this: Loose, ...args: Loose[]) => unknown;
  proto[name] = function (this: Loose, ...args: Loose[]) {
    const steps = cost(this, ...args);
    if (steps > 0) spend(steps);
    return original.apply(this, args);
  };
}

function wrap(re: Loose): boolean {
  const found = internalsOf(re);
  if (found === null) return false;
  const { dfaProto, engineProto } = found;
  // The DFA's scan: a step per character.
  charging(dfaProto, "run", (_, input, pos) => Math.max(0, input.endPos() - pos));
  // A cached transition returns at once; only building one costs its state's instructions.
  charging(dfaProto, "step", (_, state, cls, _rune, anchor) => {
    const table = anchor === 0 ? state?.next : state?.nextAnchored;
    const cached = table && table[cls] !== null && table[cls] !== undefined;
    return cached ? 0 : STATE_WEIGHT * (1 + (state?.nfaStates?.length ?? 0));
  });
  // The NFA: every character times every instruction, before it starts.
  charging(
    engineProto,
    "doExecuteNFA",
    (self, input, pos) => NFA_WEIGHT * Math.max(0, input.endPos() - pos) * self.prog.numInst(),
  );
  return true;
}

/**
 * `re.test(text)` within `budget` (steps left, spent by this search): true or
 * false, or undefined when the budget ran out before the engine could tell
 * (then `budget.left` is below 0). `counted` is whether the engine's own
 * steps are counted (its internals were found); else the search is charged
 * its worst case before it starts.
 */
export function meteredTest(
  re: { test(text: string): boolean },
  pattern: string,
  text: string,
  budget: StepBudget,
  counted: boolean = (wrapped ??= wrap(re)),
): boolean | undefined {
  if (!counted) {
    budget.left -= NFA_WEIGHT * text.length * Math.max(1, pattern.length);
    return budget.left < 0 ? undefined : re.test(text);
  }
  // Before any engine runs: the literal prefilter (at most 32 scans of the
  // text, or one automaton pass), the one-pass matcher and the backtracker
  // are each linear with a small factor, and charged this much.
  budget.left -= 1 + Math.ceil(text.length / 8);
  if (budget.left < 0) return undefined;
  meter = budget;
  try {
    return re.test(text);
  } catch (err) {
    if (err === SPENT) return undefined;
    throw err;
  } finally {
    meter = null;
  }
}

/** For tests: whether the engine's internals were found and are being counted. */
export function countingSteps(): boolean | undefined {
  return wrapped;
}
