/**
 * Events that came in as JSON text. Handing an event object to a plugin
 * worker copies it with the structured clone on the sending thread — for an
 * event of a megabyte of small keys, ~11 ms of the thread that answers every
 * tenant. The text itself crosses in a fraction of a millisecond, and parsing
 * it again in the worker gives the same event; so the service parses a
 * request body with {@linkcode parseEventText}, which remembers the text of
 * the event it returns, and the worker runtime sends {@linkcode textOf} that
 * event instead of the event. An event changed or made since (a hook's
 * modified input) is a different object, with no text: it is sent whole.
 * An agent's payload (`/v1/agents/…`) is made into an event by its adapter
 * (`agentEventOfText`), which the worker runs again on the same text, with
 * the same timestamp.
 *
 * @module
 */
import { MAX_JSON_DEPTH, textDepth } from "./depth.ts";
import { type HookEvent, type ParseEventResult, tryParseEvent } from "./event.ts";
import { HookboxError } from "../errors.ts";
import { type AgentCall, agentCall, type AgentName } from "../agents/adapters.ts";

/** The JSON text of an event and the tenant the service sets on it. */
export interface EventText {
  text: string;
  tenantId: string;
  /**
   * For an agent's payload: the agent, the event name it was given (the
   * `event` query) and the timestamp of the event its adapter made.
   */
  agent?: {
    name: AgentName;
    event?: string | undefined;
    at: string;
    /** The stop gate's count the service keeps for the session (a stop event only). */
    stopCount?: number;
  };
}

const TEXTS = new WeakMap<HookEvent, EventText>();

/**
 * Validates the event in JSON `text` for `tenantId` (its `tenant_id` is set
 * to it), as `tryParseEvent` does a body parsed for this call alone; `input`
 * is the text parsed (by default here: a caller that answers text that is not
 * JSON its own way parses it first). The nesting is checked on the text,
 * instead of a walk over the value. The same text and tenant always give an
 * equal event.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseEventText, textOf } from "./event_text.ts";
 * const source = { text: '{"event_type":"pre_session","session_id":"s"}', tenantId: "t" };
 * const r = parseEventText(source);
 * assert(r.ok && r.event.tenant_id === "t" && textOf(r.event) === source);
 * ```
 */
export function parseEventText(
  source: EventText,
  input: unknown = JSON.parse(source.text),
): ParseEventResult {
  // Not an object: tryParseEvent's own answer (before a spread would hide it).
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return tryParseEvent(input);
  }
  const parsed = tryParseEvent({ ...input, tenant_id: source.tenantId }, {
    owned: true,
    shallow: textDepth(source.text) <= MAX_JSON_DEPTH,
  });
  if (parsed.ok) TEXTS.set(parsed.event, source);
  return parsed;
}

/**
 * The event the adapter of `source.agent` makes of the payload in JSON
 * `source.text` (`input`: the text parsed), validated for `source.tenantId`
 * as {@linkcode parseEventText} does; null when the agent's event has no
 * hookbox event (it passes through). Throws `agentCall`'s `EVENT_INVALID`
 * for a payload it cannot read. The same source always gives an equal event.
 */
export function agentEventOfText(
  source: EventText & { agent: NonNullable<EventText["agent"]> },
  input: unknown = JSON.parse(source.text),
): { call: AgentCall; parsed: ParseEventResult | null } {
  const { name, event, at, stopCount } = source.agent;
  const call = agentCall(name, input, event, at);
  if (call.event === null) return { call, parsed: null };
  if (stopCount !== undefined && call.event.event_type === "pre-agent-turn-stop") {
    call.event.stop_count = stopCount;
  }
  // Depth is walked: an adapter nests the payload and may parse strings in it.
  const parsed = tryParseEvent({ ...call.event, tenant_id: source.tenantId }, { owned: true });
  if (parsed.ok) TEXTS.set(parsed.event, source);
  return { call, parsed };
}

/** The text `event` was parsed from by {@linkcode parseEventText} or {@linkcode agentEventOfText}, if it was. */
export function textOf(event: HookEvent): EventText | undefined {
  return TEXTS.get(event);
}

/**
 * The event of a text {@linkcode parseEventText} accepted (on another
 * thread, from the same text); throws if it is not one.
 */
export function eventOfText(source: EventText): HookEvent {
  const { agent } = source;
  const parsed = agent ? agentEventOfText({ ...source, agent }).parsed : parseEventText(source);
  if (parsed === null) {
    throw new HookboxError("EVENT_INVALID", "the agent's event has no hookbox event");
  }
  if (!parsed.ok) throw parsed.error;
  return parsed.event;
}
