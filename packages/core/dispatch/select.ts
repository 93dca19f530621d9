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
import { compileMatcher, type Matcher } from "../schema/matcher.ts";

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

/** True when the hook's trigger and matcher fit the event. */
export function matches(hook: HookDefinition, event: HookEvent): boolean {
  if (!hook.manifest.trigger.includes(event.event_type)) return false;
  const { tool, pattern } = regexes(hook.manifest);
  if (tool) {
    if (!TOOL_EVENTS.has(event.event_type) || typeof event.tool_name !== "string") return false;
    if (!tool.test(event.tool_name)) return false;
  }
  if (pattern) {
    const subject = patternSubject(event);
    if (!pattern.test(JSON.stringify(subject) ?? "")) return false;
  }
  return true;
}

/** Dispatch order: priority descending, then platform → user → project, then name. */
export function compareHooks(a: HookDefinition, b: HookDefinition): number {
  return (b.manifest.priority - a.manifest.priority) ||
    (LEVEL_RANK[a.level] - LEVEL_RANK[b.level]) ||
    (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/** The hooks that fit `event`, in dispatch order. */
export function selectHooks(hooks: readonly HookDefinition[], event: HookEvent): HookDefinition[] {
  return hooks.filter((h) => matches(h, event)).sort(compareHooks);
}
