/**
 * Agents' payloads that came in as JSON text (see `schema/event_text.ts`):
 * the service makes the event with the agent's adapter, remembering the text,
 * and a plugin worker makes the same event of the same text.
 *
 * @module
 */
import { HookboxError } from "../core/errors.ts";
import { type EventText, parseEventText, rememberText } from "../core/schema/event_text.ts";
import { type HookEvent, type ParseEventResult, tryParseEvent } from "../core/schema/event.ts";
import { type AgentCall, agentCall, isAgentName } from "./adapters.ts";

/**
 * The event the adapter of `source.agent` makes of the payload in JSON
 * `source.text` (`input`: the text parsed), validated for `source.tenantId`
 * as `parseEventText` does; null when the agent's event has no hookbox event
 * (it passes through). Throws `agentCall`'s `EVENT_INVALID` for a payload it
 * cannot read. The same source always gives an equal event.
 */
export function agentEventOfText(
  source: EventText & { agent: NonNullable<EventText["agent"]> },
  input: unknown = JSON.parse(source.text),
): { call: AgentCall; parsed: ParseEventResult | null } {
  const { name, event, at, stopCount } = source.agent;
  if (!isAgentName(name)) throw new HookboxError("EVENT_INVALID", `no adapter for agent "${name}"`);
  const call = agentCall(name, input, event, at);
  if (call.event === null) return { call, parsed: null };
  if (stopCount !== undefined && call.event.event_type === "pre-agent-turn-stop") {
    call.event.stop_count = stopCount;
  }
  // Depth is walked: an adapter nests the payload and may parse strings in it.
  const parsed = tryParseEvent({ ...call.event, tenant_id: source.tenantId }, { owned: true });
  if (parsed.ok) rememberText(parsed.event, source);
  return { call, parsed };
}

/**
 * The event of a text the service accepted (on another thread, from the
 * same text): a §1 event or an agent's payload; throws if it is not one.
 */
export function eventOfText(source: EventText): HookEvent {
  if (source.checked) return JSON.parse(source.text) as HookEvent;
  const { agent } = source;
  const parsed = agent ? agentEventOfText({ ...source, agent }).parsed : parseEventText(source);
  if (parsed === null) {
    throw new HookboxError("EVENT_INVALID", "the agent's event has no hookbox event");
  }
  if (!parsed.ok) throw parsed.error;
  return parsed.event;
}
