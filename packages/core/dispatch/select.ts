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
  type Matcher,
  MATCHER_STEPS_PER_EVENT,
  type StepBudget,
} from "../schema/matcher.ts";

const LEVEL_RANK: Record<HookLevel, number> = { platform: 0, user: 1, project: 2, tenant: 3 };

interface Compiled {
  tool: Matcher | null;
  pattern: Matcher | null;
}
const compiled = new WeakMap<Manifest, Compiled>();

function regexes(manifest: Manifest): Compiled {
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
  if (!hook.manifest.trigger.includes(event.event_type)) return false;
  const { tool, pattern } = regexes(hook.manifest);
  if (tool) {
    if (!TOOL_EVENTS.has(event.event_type) || typeof event.tool_name !== "string") return false;
    if (tool.testWithin(event.tool_name, selection.budget) === false) return false;
  }
  if (pattern) {
    selection.subject ??= JSON.stringify(patternSubject(event)) ?? "";
    if (pattern.testWithin(selection.subject, selection.budget) === false) return false;
  }
  return true;
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
