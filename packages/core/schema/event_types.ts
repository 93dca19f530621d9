/**
 * The lifecycle events of SPEC §1 and their snake_case aliases.
 *
 * @module
 */
import type { z } from "zod";
import { clipped } from "../runtime/failure.ts";
import { nearest } from "./near.ts";
import { zod } from "./_zod.ts";

/** Every event type hookbox dispatches, in lifecycle order. */
export const EVENT_TYPES = [
  "pre-session",
  "post-session",
  "pre-agent-turn",
  "post-agent-turn",
  "pre-agent-turn-stop",
  "post-agent-turn-stop",
  "pre-tool-call",
  "post-tool-call",
  "post-tool-call-failure",
  "pre-subagent",
  "post-subagent",
  "pre-context-compact",
  "post-context-compact",
  "pre-llm-call",
  "post-llm-call",
  "post-llm-call-failure",
] as const;

/** A canonical (kebab-case) event type. */
export type EventType = typeof EVENT_TYPES[number];

const KNOWN = new Set<string>(EVENT_TYPES);

/**
 * Maps `pre_tool_call` to `pre-tool-call`; returns null for unknown names.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { normalizeEventType } from "./event_types.ts";
 * assert(normalizeEventType("pre_tool_call") === "pre-tool-call");
 * assert(normalizeEventType("nope") === null);
 * ```
 */
export function normalizeEventType(name: string): EventType | null {
  const kebab = name.replaceAll("_", "-");
  return KNOWN.has(kebab) ? kebab as EventType : null;
}

let typeSchema: z.ZodType<EventType, string> | null = null;

/** Zod schema for an event type that accepts snake_case aliases (built at first use). */
export function eventTypeSchema(): z.ZodType<EventType, string> {
  if (typeSchema !== null) return typeSchema;
  const z = zod();
  return typeSchema = z.string().transform((value, ctx) => {
    const type = normalizeEventType(value);
    if (type === null) {
      ctx.addIssue({
        code: "custom",
        message: `unknown event type ${JSON.stringify(clipped(value, 64))}${
          nearestEvent(value)
        } (expected one of ${EVENT_TYPES.join(", ")})`,
      });
      return z.NEVER;
    }
    return type;
  });
}

/** `; did you mean "pre-tool-call"?` for a name that an event starts with or is close to, else "". */
function nearestEvent(name: string): string {
  const kebab = name.replaceAll("_", "-").toLowerCase();
  const near = nearest(kebab, EVENT_TYPES);
  return near === undefined ? "" : `; did you mean "${near}"?`;
}

/** Tool events: the ones that carry `tool_name` and can be matched by `matcher.tool`. */
export const TOOL_EVENTS: ReadonlySet<EventType> = new Set([
  "pre-tool-call",
  "post-tool-call",
  "post-tool-call-failure",
]);

/** Events hooks cannot block (SPEC §1 "can block: no"): a block is recorded, never applied. */
export const UNBLOCKABLE_EVENTS: ReadonlySet<EventType> = new Set(["post-llm-call-failure"]);
