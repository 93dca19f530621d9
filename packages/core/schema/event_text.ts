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
 * (`agents/event_text.ts`), which the worker runs again on the same text,
 * with the same timestamp; this layer knows no agent.
 *
 * @module
 */
import { MAX_JSON_DEPTH, textDepth } from "./depth.ts";
import { type HookEvent, type ParseEventResult, tryParseEvent } from "./event.ts";

/** The JSON text of an event and the tenant the service sets on it. */
export interface EventText {
  /** The event (or the agent's payload) as JSON text. */
  text: string;
  /** The tenant whose event it is. */
  tenantId: string;
  /**
   * The text of an event already checked where it was made (not a
   * request's): it is parsed as it is, neither checked nor given a tenant.
   */
  checked?: true;
  /**
   * For an agent's payload: the agent, the event name it was given (the
   * `event` query) and the timestamp of the event its adapter made.
   */
  agent?: {
    /** One of the agents of `agents/adapters.ts`. */
    name: string;
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

/** Remembers that `event` was made from `source` (see {@linkcode textOf}). */
export function rememberText(event: HookEvent, source: EventText): void {
  TEXTS.set(event, source);
}

/** The text `event` was made from (by {@linkcode parseEventText} or an agent's adapter), if it was. */
export function textOf(event: HookEvent): EventText | undefined {
  return TEXTS.get(event);
}
