/**
 * Selection and ordering (SPEC §4.1–4.2).
 *
 * @module
 */
import type { HookDefinition, HookLevel } from "../hook/types.ts";
import type { HookEvent } from "../schema/event.ts";
import { TOOL_EVENTS } from "../schema/event_types.ts";
import type { Manifest } from "../schema/manifest.ts";
import { patternSubject } from "./fields.ts";
import {
  cheapToCompile,
  compileMatcher,
  type Matcher,
  MATCHER_STEPS_PER_EVENT,
  type StepBudget,
} from "../schema/matcher.ts";

const LEVEL_RANK: Record<HookLevel, number> = { platform: 0, user: 1, project: 2, tenant: 3 };

/** A manifest's matchers, compiled; null where it has none. */
export interface CompiledMatchers {
  tool: Matcher | null;
  pattern: Matcher | null;
}
const compiled = new WeakMap<Pick<Manifest, "matcher">, CompiledMatchers>();

/** A manifest's matchers, compiled once (kept with the manifest). */
export function compiledMatchers(manifest: Pick<Manifest, "matcher">): CompiledMatchers {
  let found = compiled.get(manifest);
  if (!found) {
    const { tool, pattern } = manifest.matcher ?? {};
    found = {
      tool: tool === undefined ? null : compileMatcher(tool),
      pattern: pattern === undefined ? null : compileMatcher(pattern),
    };
    compiled.set(manifest, found);
  }
  return found;
}

/**
 * What the matchers of one event share: the budget of steps their regexes
 * may take together, and the pattern subject's text, made once.
 */
export interface Selection {
  budget: StepBudget;
  subject?: string;
}

/** A fresh {@linkcode Selection} for one event. */
export function newSelection(): Selection {
  return { budget: { left: MATCHER_STEPS_PER_EVENT } };
}

/**
 * True when the hook's trigger and matcher fit the event. A matcher whose
 * answer the event's budget cannot pay for counts as fitting: the hook runs
 * and sees the event (a guard still decides; `docs/SECURITY.md`, matchers).
 */
export function matches(
  hook: HookDefinition,
  event: HookEvent,
  selection: Selection = newSelection(),
): boolean {
  return fits(hook.manifest, event, selection) !== false;
}

/**
 * Whether a manifest's trigger and matcher fit the event: undefined when the
 * selection's budget ran out before its matcher could tell.
 */
function fits(
  manifest: Pick<Manifest, "trigger" | "matcher">,
  event: { event_type: HookEvent["event_type"]; [field: string]: unknown },
  selection: Selection,
): boolean | undefined {
  if (!manifest.trigger.includes(event.event_type)) return false;
  const { tool, pattern } = compiledMatchers(manifest);
  let known = true;
  if (tool) {
    if (!TOOL_EVENTS.has(event.event_type) || typeof event.tool_name !== "string") return false;
    const fit = tool.testWithin(event.tool_name, selection.budget);
    if (fit === false) return false;
    known = fit === true;
  }
  if (pattern) {
    selection.subject ??= JSON.stringify(patternSubject(event)) ?? "";
    const fit = pattern.testWithin(selection.subject, selection.budget);
    if (fit === false) return false;
    known &&= fit === true;
  }
  return known ? true : undefined;
}

/** Dispatch order: priority descending, then platform → user → project, then name. */
export function compareHooks(a: HookDefinition, b: HookDefinition): number {
  return (b.manifest.priority - a.manifest.priority) ||
    (LEVEL_RANK[a.level] - LEVEL_RANK[b.level]) ||
    (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

const LEVELS = Object.keys(LEVEL_RANK) as HookLevel[];

/**
 * The hooks that fit `event`, in dispatch order. Matchers are tried level by
 * level, platform first, on one budget: a level's hooks cannot spend what a
 * higher level's matchers need.
 */
export function selectHooks(hooks: readonly HookDefinition[], event: HookEvent): HookDefinition[] {
  const selection = newSelection();
  const fit: HookDefinition[] = [];
  for (const level of LEVELS) {
    for (const hook of hooks) {
      if (hook.level === level && matches(hook, event, selection)) fit.push(hook);
    }
  }
  // compareHooks is a total order: the order tried in does not show.
  return fit.sort(compareHooks);
}

/**
 * The matchers {@linkcode selectHooksApart} leaves to another thread, with
 * what they need of the event and the steps left of its budget.
 */
export interface MatcherJob {
  /** The event's type. */
  event_type: HookEvent["event_type"];
  /** The event's tool name; null when it has none. */
  tool_name: string | null;
  /** The pattern subject's text (`patternSubject`, as JSON). */
  subject: string;
  /** The matchers to decide, in the order their hooks were tried. */
  matchers: NonNullable<Manifest["matcher"]>[];
  /** Steps of the event's matcher budget left for them together. */
  steps: number;
}

/**
 * Decides a {@linkcode MatcherJob} (on the thread it was sent to): whether
 * each matcher fits, on one budget of `job.steps`; one the budget cannot
 * answer fits, as in {@linkcode matches}.
 */
export function matcherVerdicts(job: MatcherJob): boolean[] {
  const selection: Selection = { budget: { left: job.steps }, subject: job.subject };
  const event = { event_type: job.event_type, tool_name: job.tool_name };
  const trigger = [job.event_type];
  return job.matchers.map((matcher) => fits({ trigger, matcher }, event, selection) !== false);
}

/**
 * Matchers {@linkcode selectHooksApart} compiles in place per event, at
 * most: compiling one can take several milliseconds (`matcher.ts`), and a
 * tenant may have a thousand hooks.
 */
export const INLINE_COMPILES = 1;

/** True when compiling the manifest's matchers costs next to nothing (`cheapToCompile`). */
function cheapMatchers(manifest: Pick<Manifest, "matcher">): boolean {
  const { tool, pattern } = manifest.matcher ?? {};
  return (tool === undefined || cheapToCompile(tool)) &&
    (pattern === undefined || cheapToCompile(pattern));
}

/**
 * {@linkcode selectHooks} for a thread that answers others too (the
 * service's request thread): the matchers of `apartLevel`'s hooks first take
 * at most `inlineSteps` of the event's budget here, and at most
 * {@linkcode INLINE_COMPILES} of them not compiled yet are compiled here;
 * the others, and those that cannot tell within the steps, go as a
 * {@linkcode MatcherJob} with the rest of the budget to `apart` (another
 * thread). Its verdicts decide them; should it fail, they count as fitting,
 * as a matcher out of budget does.
 */
export async function selectHooksApart(
  hooks: readonly HookDefinition[],
  event: HookEvent,
  apartLevel: HookLevel,
  inlineSteps: number,
  apart: (job: MatcherJob) => Promise<boolean[] | null>,
): Promise<HookDefinition[]> {
  const selection = newSelection();
  const fit: HookDefinition[] = [];
  const undecided: HookDefinition[] = [];
  for (const level of LEVELS) {
    if (level !== apartLevel) {
      for (const hook of hooks) {
        if (hook.level === level && matches(hook, event, selection)) fit.push(hook);
      }
      continue;
    }
    const start = Math.min(inlineSteps, selection.budget.left);
    const inline: Selection = { budget: { left: start } };
    if (selection.subject !== undefined) inline.subject = selection.subject;
    let compiles = INLINE_COMPILES;
    for (const hook of hooks) {
      if (hook.level !== level) continue;
      if (!compiled.has(hook.manifest) && !cheapMatchers(hook.manifest)) {
        if (compiles === 0) {
          undecided.push(hook);
          continue;
        }
        compiles--;
      }
      const verdict = fits(hook.manifest, event, inline);
      if (verdict === true) fit.push(hook);
      else if (verdict === undefined) undecided.push(hook);
    }
    // A search refused before it started charged more than it did: at most the inline steps ran.
    selection.budget.left -= start - Math.max(0, inline.budget.left);
    if (inline.subject !== undefined) selection.subject = inline.subject;
  }
  if (undecided.length > 0) {
    const verdicts = await apart({
      event_type: event.event_type,
      tool_name: typeof event.tool_name === "string" ? event.tool_name : null,
      subject: selection.subject ??
        (undecided.some((h) => h.manifest.matcher?.pattern !== undefined)
          ? JSON.stringify(patternSubject(event)) ?? ""
          : ""),
      matchers: undecided.map((h) => h.manifest.matcher ?? {}),
      steps: Math.max(0, selection.budget.left),
    }).catch(() => null);
    undecided.forEach((hook, i) => {
      if (verdicts?.[i] !== false) fit.push(hook);
    });
  }
  return fit.sort(compareHooks);
}
