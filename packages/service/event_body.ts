/**
 * An event request's body made into the event it carries: UTF-8, JSON, and
 * the §1 event (or, for `/v1/agents/…`, the agent's call and its event),
 * with the same answers wherever it is done. A body of at least
 * {@linkcode EventCodec.minBytes} is read by the service's
 * {@linkcode EventCodec} when it has one (the Deno server: a worker of its
 * own), so that a megabyte of small keys costs the thread that answers every
 * tenant next to nothing: the codec sends back the text and the event
 * packed with its big parts as text (`core/schema/lazy_json.ts`), parsed on
 * this thread only if something here reads them. The hooks get the text.
 *
 * @module
 */
import { HookboxError, isHookboxError } from "../core/errors.ts";
import { loadZod, zodLoaded } from "../core/schema/loaders.ts";
import { type LazyPack, packLazy, unpackLazy } from "../core/schema/lazy_json.ts";
import type { HookEvent, ParseEventResult } from "../core/schema/event.ts";
import { type EventText, parseEventText, rememberText } from "../core/schema/event_text.ts";
import { agentEventOfText } from "../agents/event_text.ts";
import type { AgentCall } from "../agents/adapters.ts";
import { ApiError, type ErrorStatus } from "./errors.ts";
import { jsonOf, utf8Text } from "./request.ts";

/** `/v1/agents/{agent}/events`: the agent, its `event` query and the event's timestamp. */
export interface AgentSource {
  /** The agent whose adapter reads the payload (`AGENTS`; another is `EVENT_INVALID`). */
  name: string;
  /** The `event` query: the agent's event name, when the payload does not say. */
  event?: string | undefined;
  /** The timestamp of the event its adapter makes (RFC 3339). */
  at: string;
}

/** Whose body it is, and for an agent's route, which agent's. */
export interface EventBodySource {
  /** The tenant the event is for (its `tenant_id`). */
  tenantId: string;
  /** For `/v1/agents/{agent}/events`. */
  agent?: AgentSource;
}

/** What a body carried. */
export interface EventBody {
  /** The body as text ("" when it is not UTF-8). */
  text: string;
  /** Why the body is no event hookbox can read (`400`), if it is not. */
  error: ApiError | null;
  /** The agent's call (agents' route only, without `error`). */
  call: AgentCall | null;
  /** The event or why it is invalid; null without one (an error, or an agent event that passes through). */
  parsed: ParseEventResult | null;
  /** The text the event was made from, with its source (the plugin workers are sent it). */
  source: EventText | null;
}

/**
 * Reads big event bodies and writes big answers somewhere other than the
 * thread answering requests.
 */
export interface EventCodec {
  /**
   * Bodies of at least this many bytes are read by it, and answers of at
   * least this many characters of text written by it; smaller ones in place.
   */
  readonly minBytes: number;
  /** {@linkcode readEventBody} of `bytes`, as an {@linkcode EventBodyMessage}. */
  read(bytes: Uint8Array, source: EventBodySource): Promise<EventBodyMessage>;
  /** `value` (an answer of `tenantId`'s) as JSON, UTF-8. */
  write(tenantId: string, value: unknown): Promise<Uint8Array>;
}

/** Makes the body into its event (see the module doc). Never throws for what the body holds. */
export function readEventBody(bytes: Uint8Array, from: EventBodySource): EventBody {
  const body: EventBody = { text: "", error: null, call: null, parsed: null, source: null };
  try {
    body.text = utf8Text(bytes);
    const input = jsonOf(body.text);
    const source: EventText = { text: body.text, tenantId: from.tenantId };
    body.source = source;
    if (from.agent === undefined) {
      body.parsed = parseEventText(source, input);
      return body;
    }
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      throw new ApiError(400, "EVENT_INVALID", "event must be a JSON object");
    }
    const agentSource = { ...source, agent: { ...from.agent } };
    body.source = agentSource;
    try {
      const made = agentEventOfText(agentSource, input);
      body.call = made.call;
      body.parsed = made.parsed;
    } catch (err) {
      if (!isHookboxError(err)) throw err;
      throw new ApiError(400, err.code, err.message, err.field ? { field: err.field } : {});
    }
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    body.error = err;
    body.call = null;
    body.parsed = null;
    body.source = null;
  }
  return body;
}

/**
 * {@linkcode readEventBody} where zod may be loaded on demand (an edge
 * Worker: `core/schema/_zod.ts`). An event the fast path reads needs no
 * zod; any other body is read again once zod is loaded, so an invalid event
 * is answered with the field zod names, never with zod's absence.
 */
export async function readEventBodyLoaded(
  bytes: Uint8Array,
  from: EventBodySource,
): Promise<EventBody> {
  if (zodLoaded()) return readEventBody(bytes, from);
  try {
    const body = readEventBody(bytes, from);
    if (body.error === null && body.parsed?.ok !== false) return body;
  } catch {
    // Read again below, with zod.
  }
  await loadZod();
  return readEventBody(bytes, from);
}

/** An {@linkcode EventBody} as a worker sends it: structured-clone safe, big parts as text. */
export interface EventBodyMessage {
  /** The body as text ("" when it is not UTF-8). */
  text: string;
  /** Why the body is no event (an `ApiError`'s parts). */
  error: { status: ErrorStatus; code: string; message: string; field?: string } | null;
  /** The event's error, when the event is invalid. */
  invalid: { code: string; message: string; field?: string } | null;
  /** `{call, event}` packed; event null for an invalid event or a pass-through. */
  pack: LazyPack | null;
  /** The agent source's fields (agents' route). */
  agent: AgentSource | null;
}

/** The message of `body` (on the codec's thread). */
export function eventBodyMessage(body: EventBody): EventBodyMessage {
  const { text, error, call, parsed, source } = body;
  const invalid = parsed !== null && !parsed.ok ? parsed.error : null;
  return {
    text,
    error: error === null ? null : {
      status: error.status,
      code: error.code,
      message: error.message,
      ...(error.extra.field === undefined ? {} : { field: error.extra.field }),
    },
    invalid: invalid === null ? null : {
      code: invalid.code,
      message: invalid.message,
      ...(invalid.field === undefined ? {} : { field: invalid.field }),
    },
    pack: error !== null
      ? null
      : packLazy({ call, event: parsed !== null && parsed.ok ? parsed.event : null }),
    agent: source?.agent === undefined ? null : {
      name: source.agent.name,
      event: source.agent.event,
      at: source.agent.at,
    },
  };
}

/** The body of `message` (on the thread answering requests): see the module doc. */
export function eventBodyOf(message: EventBodyMessage, tenantId: string): EventBody {
  const { text } = message;
  if (message.error !== null) {
    const { status, code, message: why, field } = message.error;
    const error = new ApiError(status, code as never, why, field === undefined ? {} : { field });
    return { text, error, call: null, parsed: null, source: null };
  }
  const source: EventText = message.agent === null
    ? { text, tenantId }
    : { text, tenantId, agent: { ...message.agent } };
  const { call, event } = unpackLazy(message.pack!) as {
    call: AgentCall | null;
    event: HookEvent | null;
  };
  let parsed: ParseEventResult | null = null;
  if (message.invalid !== null) {
    const { code, message: why, field } = message.invalid;
    parsed = {
      ok: false,
      error: new HookboxError(code as never, why, field === undefined ? {} : { field }),
    };
  } else if (event !== null) {
    rememberText(event, source);
    parsed = { ok: true, event };
  }
  return { text, error: null, call, parsed, source };
}
