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
 * The DFA's cache of states is memory no step pays for: each pattern's is
 * held to {@linkcode DFA_BYTES}, and all patterns' together to one pool,
 * the caches searched longest ago cleared first.
 *
 * @module
 */

/**
 * Bytes (the engine's own estimate, about the heap they take) a compiled
 * pattern's DFA may hold in cached states; past it the engine clears its
 * cache and goes on, or gives up to its NFA. The engine's default, 8 MiB,
 * let each pattern grow to ~5 MiB of heap over a few dozen events.
 */
export const DFA_BYTES = 1024 * 1024;

/**
 * Bytes the DFAs of all patterns may hold together, and how many DFAs may
 * hold any: a tenant's thousand hooks have two matchers each, and a process
 * serves many tenants. Past either, the caches searched longest ago are
 * cleared (they are built again if searched again, within the steps the
 * search is charged). {@linkcode limitDfaCaches} changes them (tests).
 */
const pool = { bytes: 64 * 1024 * 1024, entries: 4_096 };

/** The DFAs holding cached states, searched longest ago first, with the bytes each held. */
const holding = new Map<Loose, number>();
let held = 0;
/** The DFA {@linkcode noteCache} moved to the end of {@linkcode holding} last. */
let lastNoted: Loose = null;

/** Lowers a DFA's state budget to {@linkcode DFA_BYTES}, once. */
function capCache(dfa: Loose): void {
  if (typeof dfa?.stateBudget !== "number" || dfa.stateBudget <= DFA_BYTES) return;
  const used = dfa.stateBudget - dfa.memBudget;
  dfa.stateBudget = DFA_BYTES;
  dfa.memBudget = Math.max(0, DFA_BYTES - used);
}

/** Counts what `re`'s DFA holds after a search, and clears the oldest caches past the pool. */
function noteCache(re: Loose): void {
  const dfa = re?.re2Input?.lazyDFA;
  const bytes = dfaCacheBytes(re);
  if (dfa === null || dfa === undefined || bytes === undefined) return;
  // Searched last and grown by nothing (most searches on a hot path): nothing to move.
  if (dfa === lastNoted && bytes === holding.get(dfa)) return;
  lastNoted = dfa;
  held += bytes - (holding.get(dfa) ?? 0);
  holding.delete(dfa);
  if (bytes > 0) holding.set(dfa, bytes);
  while (held > pool.bytes || holding.size > pool.entries) {
    const [oldest, size] = holding.entries().next().value!;
    if (oldest === dfa) break; // the one just searched: within DFA_BYTES on its own
    holding.delete(oldest);
    held -= size;
    oldest.clearCache?.();
  }
}

/** Takes `re`'s DFA out of the pool (its program is let go): the pool holds it no longer. */
export function forgetCache(re: unknown): void {
  const dfa = (re as Loose)?.re2Input?.lazyDFA;
  if (dfa === null || dfa === undefined) return;
  const size = holding.get(dfa);
  if (size !== undefined) {
    holding.delete(dfa);
    held -= size;
  }
  if (lastNoted === dfa) lastNoted = null;
}

/** Sets the bytes and the number of DFAs the pool of cached states may hold (tests). */
export function limitDfaCaches(limits: { bytes: number; entries: number }): void {
  pool.bytes = limits.bytes;
  pool.entries = limits.entries;
}

/** Steps charged per NFA instruction of a DFA state built during a search. */
export const STATE_WEIGHT = 128;
/** Steps charged per character per instruction when the NFA runs. */
export const NFA_WEIGHT = 4;

/** What is left of a budget of steps; shared by the searches of one event. */
export interface StepBudget {
  /** Steps left; below 0 once a search ran out of them. */
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
  // The DFA's scan: a step per character; and its state cache held to DFA_BYTES.
  charging(dfaProto, "run", (self, input, pos) => {
    capCache(self);
    return Math.max(0, input.endPos() - pos);
  });
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
    noteCache(re);
  }
}

/** The bytes `re`'s DFA holds in cached states, by the engine's estimate; undefined if unknown. */
export function dfaCacheBytes(re: unknown): number | undefined {
  const dfa = (re as Loose)?.re2Input?.lazyDFA;
  if (dfa === null) return 0; // not made yet: no search has needed it
  if (typeof dfa?.stateBudget !== "number" || typeof dfa.memBudget !== "number") return undefined;
  return dfa.stateBudget - dfa.memBudget;
}

/** The number of instructions of `re`'s program; undefined if unknown. */
export function programSize(re: unknown): number | undefined {
  try {
    const size = (re as Loose)?.re2Input?.prog?.numInst?.();
    return Number.isSafeInteger(size) ? size : undefined;
  } catch {
    return undefined;
  }
}

/** For tests: whether the engine's internals were found and are being counted. */
export function countingSteps(): boolean | undefined {
  return wrapped;
}
