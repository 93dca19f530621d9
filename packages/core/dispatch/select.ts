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
  compileMatcher,
  compileWithin,
  type Matcher,
  MATCHER_STEPS_PER_EVENT,
  type StepBudget,
} from "../schema/matcher.ts";

const LEVEL_RANK: Record<HookLevel, number> = { platform: 0, user: 1, project: 2, tenant: 3 };

/**
 * A manifest's matchers compiled so far (kept with the manifest, and freed by
 * the patterns kept compiled: a released one is compiled again when needed).
 */
const compiled = new WeakMap<Pick<Manifest, "matcher">, { tool?: Matcher; pattern?: Matcher }>();

/**
 * The manifest's `tool` or `pattern` matcher, compiled once (kept with the
 * manifest): null when it has none; with `budget`, undefined when compiling
 * it would need steps the budget no longer has (`compileWithin`).
 */
export function manifestMatcher(
  manifest: Pick<Manifest, "matcher">,
  which: "tool" | "pattern",
  budget?: StepBudget,
): Matcher | null | undefined {
  const source = manifest.matcher?.[which];
  if (source === undefined) return null;
  let kept = compiled.get(manifest);
  if (kept === undefined) compiled.set(manifest, kept = {});
  const have = kept[which];
  const found = (have?.released === false ? have : undefined) ??
    (budget === undefined ? compileMatcher(source) : compileWithin(source, budget));
  if (found !== undefined) kept[which] = found;
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
  const matcher = manifest.matcher;
  if (matcher === undefined) return true;
  const { budget } = selection;
  const kept = compiled.get(manifest);
  let known = true;
  if (matcher.tool !== undefined) {
    if (!TOOL_EVENTS.has(event.event_type) || typeof event.tool_name !== "string") return false;
    const tool = live(kept?.tool) ?? manifestMatcher(manifest, "tool", budget);
    const fit = tool?.testWithin(event.tool_name, budget);
    if (fit === false) return false;
    known = fit === true;
  }
  if (matcher.pattern !== undefined) {
    const pattern = live(kept?.pattern) ?? manifestMatcher(manifest, "pattern", budget);
    if (pattern === undefined) return undefined;
    selection.subject ??= JSON.stringify(patternSubject(event)) ?? "";
    const fit = pattern?.testWithin(selection.subject, budget);
    if (fit === false) return false;
    known &&= fit === true;
  }
  return known ? true : undefined;
}

/** `matcher` unless it has been released. */
function live(matcher: Matcher | undefined): Matcher | undefined {
  return matcher?.released === false ? matcher : undefined;
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
  // compareHooks is a total order: the order tried in does not show.
  return selectLevels(hooks, event, newSelection(), null).fit.sort(compareHooks);
}

/** What a level of hooks may spend in place: at most `steps` of the event's budget. */
interface InlineShare {
  level: HookLevel;
  steps: number;
}

/**
 * Tries the matchers level by level on `selection`'s budget. The hooks of
 * `inline.level` get at most `inline.steps` of it: those whose matchers
 * cannot tell within them are `undecided` (without `inline`, a matcher out
 * of budget fits).
 */
function selectLevels(
  hooks: readonly HookDefinition[],
  event: HookEvent,
  selection: Selection,
  inline: InlineShare | null,
): { fit: HookDefinition[]; undecided: HookDefinition[] } {
  const fit: HookDefinition[] = [];
  const undecided: HookDefinition[] = [];
  for (const level of LEVELS) {
    if (level !== inline?.level) {
      for (const hook of hooks) {
        if (hook.level === level && matches(hook, event, selection)) fit.push(hook);
      }
      continue;
    }
    const start = Math.min(inline.steps, selection.budget.left);
    const share: Selection = { budget: { left: start } };
    if (selection.subject !== undefined) share.subject = selection.subject;
    for (const hook of hooks) {
      if (hook.level !== level) continue;
      const verdict = fits(hook.manifest, event, share);
      if (verdict === true) fit.push(hook);
      else if (verdict === undefined) undecided.push(hook);
    }
    // A search refused before it started is charged more than it ran: the event's budget pays
    // the inline steps (a compile begun within them may run past them, one at most).
    selection.budget.left -= start - Math.max(0, share.budget.left);
    if (share.subject !== undefined) selection.subject = share.subject;
  }
  return { fit, undecided };
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
 * {@linkcode selectHooks} for a thread that answers others too (the
 * service's request thread): the matchers of `apartLevel`'s hooks first take
 * at most `inlineSteps` of the event's budget here, their compiles included;
 * those that cannot tell within them go as a {@linkcode MatcherJob} with the
 * rest of the budget to `apart` (another thread). Its verdicts decide them;
 * should it fail, they count as fitting, as a matcher out of budget does.
 */
export async function selectHooksApart(
  hooks: readonly HookDefinition[],
  event: HookEvent,
  apartLevel: HookLevel,
  inlineSteps: number,
  apart: (job: MatcherJob) => Promise<boolean[] | null>,
): Promise<HookDefinition[]> {
  const selection = newSelection();
  const { fit, undecided } = selectLevels(hooks, event, selection, {
    level: apartLevel,
    steps: inlineSteps,
  });
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
