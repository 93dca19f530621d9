/**
 * Which event field a hook's `modified_input` / `modified_output` replaces and
 * which one `matcher.pattern` reads.
 *
 * @module
 */
import type { EventType } from "../schema/event_types.ts";
import { TOOL_EVENTS } from "../schema/event_types.ts";

type Kind = "object" | "string" | "array";

/** The field `modified_input` replaces, with the JSON type it must have. */
export function inputField(type: EventType): { name: string; kind: Kind } | null {
  if (TOOL_EVENTS.has(type)) return { name: "tool_input", kind: "object" };
  if (type === "pre-agent-turn") return { name: "prompt", kind: "string" };
  if (type === "pre-llm-call" || type === "post-llm-call") {
    return { name: "messages", kind: "array" };
  }
  return null;
}

/** The field `modified_output` replaces. */
export function outputField(type: EventType): string | null {
  if (type === "post-tool-call") return "tool_output";
  if (type === "post-llm-call") return "response";
  return null;
}

const SUBJECT: Partial<Record<EventType, string>> = {
  "pre-agent-turn-stop": "last_message",
  "post-agent-turn-stop": "last_message",
  "post-agent-turn": "response",
  "pre-subagent": "task",
  "post-subagent": "task",
  "post-context-compact": "summary",
  "post-llm-call-failure": "messages",
};

/** The value `matcher.pattern` is tested against (as JSON text). */
export function patternSubject(event: { event_type: EventType; [k: string]: unknown }): unknown {
  const name = inputField(event.event_type)?.name ?? SUBJECT[event.event_type];
  return name !== undefined && event[name] !== undefined ? event[name] : event;
}

/** True when `value` has the JSON kind a field needs. */
export function hasKind(value: unknown, kind: Kind): boolean {
  if (kind === "array") return Array.isArray(value);
  if (kind === "object") {
    return typeof value === "object" && value !== null && !Array.isArray(value);
  }
  return typeof value === "string";
}
