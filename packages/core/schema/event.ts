/**
 * Event JSON schemas (SPEC §1): the common fields, each event's own fields,
 * snake_case aliases, and pass-through of unknown fields.
 *
 * @module
 */
import type { z } from "zod";
import { loadZod, zod } from "./_zod.ts";
import { MAX_JSON_DEPTH, tooDeepAt } from "./depth.ts";
import { unstorable } from "./storable.ts";
import { HookboxError } from "../errors.ts";
import { type EventType, eventTypeSchema } from "./event_types.ts";
import { toHookboxError } from "./issues.ts";
import { fastParseEvent } from "./_event_fast.ts";

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * The zod schemas, built at their first use: the fast path answers for every
 * valid event, so a process that only sees valid ones (a one-shot CLI, an
 * edge Worker starting up) never pays for building them.
 */
let built: {
  head: z.ZodType<{ event_type: EventType }>;
  schemas: Record<EventType, z.ZodType<HookEvent>>;
} | null = null;

/**
 * Longest `session_id`. Agents send UUIDs; the service writes the id into the
 * audit row of every event and answers it in audit pages: unbounded, one
 * tenant could make each of its rows (and a page of a hundred of them) as
 * large as an event may be.
 */
export const MAX_SESSION_ID = 1024;

/**
 * Longest `work_dir`, in characters: Linux's `PATH_MAX` (no longer path
 * names a folder). Hooks are looked for under it, so a longer one from a
 * payload would only make discovery walk a path no system call accepts.
 */
export const MAX_WORK_DIR = 4096;

function zodSchemas(): NonNullable<typeof built> {
  if (built !== null) return built;
  const z = zod();
  const common = {
    event_type: eventTypeSchema(),
    timestamp: z.string().regex(RFC3339, "must be an RFC 3339 timestamp").optional(),
    session_id: z.string().min(1).max(MAX_SESSION_ID).refine((v) => !unstorable(v), {
      message: "must not hold a NUL or a lone UTF-16 surrogate (it is stored in the audit)",
    }),
    work_dir: z.string().min(1).max(MAX_WORK_DIR, {
      message: `must be at most ${MAX_WORK_DIR} characters (the longest path a folder can have)`,
    }).optional(),
    tenant_id: z.string().min(1).max(128).optional(),
    turn_id: z.string().optional(),
    store: z.record(z.string(), z.unknown()).optional(),
  };

  const json = z.unknown().refine((v) => v !== undefined, "is required");
  const count = z.number().int().min(0);
  const message = z.looseObject({ role: z.string(), content: z.unknown() });

  const tool = {
    tool_name: z.string().min(1),
    tool_input: z.record(z.string(), z.unknown()),
    tool_use_id: z.string().optional(),
  };
  const llm = {
    messages: z.array(message),
    tools: z.array(z.unknown()).optional(),
    model: z.string().optional(),
    iteration: count.optional(),
  };

  /** Fields each event carries besides the common ones. */
  const EXTRA: Record<EventType, z.ZodRawShape> = {
    "pre-session": { source: z.string().optional() },
    "post-session": { reason: z.string().optional() },
    "pre-agent-turn": { prompt: z.string() },
    "post-agent-turn": { response: json },
    "pre-agent-turn-stop": { last_message: z.string(), stop_count: count.default(0) },
    "post-agent-turn-stop": { last_message: z.string() },
    "pre-tool-call": tool,
    "post-tool-call": { ...tool, tool_output: json },
    "post-tool-call-failure": { ...tool, error: json },
    "pre-subagent": { subagent_name: z.string().min(1), task: json },
    "post-subagent": { subagent_name: z.string().min(1), task: json, result: json },
    "pre-context-compact": { message_count: count },
    "post-context-compact": { summary: z.string(), compacted_count: count },
    "pre-llm-call": llm,
    "post-llm-call": { ...llm, response: json, usage: z.unknown().optional() },
    "post-llm-call-failure": { ...llm, messages: llm.messages.optional(), error: json },
  };

  const schemas = Object.fromEntries(
    Object.entries(EXTRA).map(([type, shape]) => [type, z.looseObject({ ...common, ...shape })]),
  ) as unknown as Record<EventType, z.ZodType<HookEvent>>;
  /** The part of an event that picks its schema. */
  const head = z.object({ event_type: eventTypeSchema() });
  return built = { head, schemas };
}

/**
 * The JSON Schema (draft 2020-12) of each event type's input, made from the
 * zod schemas that validate events (docs/events.md and `docs/events/` are
 * written from these by `scripts/event_schemas.ts`).
 */
export function eventJsonSchemas(): Record<EventType, Record<string, unknown>> {
  const z = zod();
  const { schemas } = zodSchemas();
  return Object.fromEntries(
    Object.entries(schemas).map(([type, schema]) => {
      const json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<
        string,
        unknown
      >;
      // The event type is one value per schema (its aliases are accepted too: pre_tool_call).
      const properties = json.properties as Record<string, Record<string, unknown>>;
      properties.event_type = { type: "string", const: type };
      return [type, { title: type, ...json }];
    }),
  ) as unknown as Record<EventType, Record<string, unknown>>;
}

/** A validated event. Unknown fields are kept as they came. */
export interface HookEvent {
  /** The lifecycle event (SPEC §1). */
  event_type: EventType;
  /** When it happened (RFC 3339). */
  timestamp?: string;
  /** The agent session. */
  session_id: string;
  /** The agent's working directory. */
  work_dir?: string;
  /** The tenant (overwritten by the service from the key). */
  tenant_id?: string;
  /** The agent turn. */
  turn_id?: string;
  /** The shared store hooks read and extend. */
  store?: Record<string, unknown>;
  /** The event type's own fields (SPEC §1). */
  [field: string]: unknown;
}

/**
 * Most top-level fields an event may have. Agents send about a dozen; an
 * event of tens of thousands (the schema passes unknown fields through) would
 * cost the thread that answers every tenant as much as parsing it whole,
 * because those fields are what it reads (`lazy_json.ts`).
 */
export const MAX_EVENT_FIELDS = 1024;

/** The `EVENT_INVALID` of an event with more than {@linkcode MAX_EVENT_FIELDS} fields, if it has. */
function tooWide(input: object): HookboxError | null {
  let fields = 0;
  for (const _ in input) {
    if (++fields > MAX_EVENT_FIELDS) {
      return new HookboxError(
        "EVENT_INVALID",
        `event has more than ${MAX_EVENT_FIELDS} top-level fields`,
        { field: "event" },
      );
    }
  }
  return null;
}

/** Result form of {@linkcode parseEvent}. */
export type ParseEventResult = { ok: true; event: HookEvent } | { ok: false; error: HookboxError };

/**
 * Validates an event; never throws. The error names the offending field.
 * `owned`: the caller hands `input` over (a freshly parsed request body), so
 * its records and arrays may become the event's instead of being copied.
 * `shallow`: the caller has checked that `input` nests no deeper than
 * `MAX_JSON_DEPTH` (on the text it parsed it from: `textDepth`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { tryParseEvent } from "./event.ts";
 * const r = tryParseEvent({ event_type: "pre_tool_call", session_id: "s" });
 * assert(!r.ok && r.error.field === "tool_name");
 * ```
 */
export function tryParseEvent(
  input: unknown,
  options: { owned?: boolean; shallow?: boolean } = {},
): ParseEventResult {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return { ok: false, error: new HookboxError("EVENT_INVALID", "event must be a JSON object") };
  }
  const wide = tooWide(input);
  if (wide !== null) return { ok: false, error: wide };
  const deep = options.shallow ? null : tooDeepAt(input);
  if (deep !== null) {
    const error = new HookboxError(
      "JSON_TOO_DEEP",
      `event nests deeper than ${MAX_JSON_DEPTH} levels at ${deep}`,
      { field: deep },
    );
    return { ok: false, error };
  }
  const fast = fastParseEvent(input as Record<string, unknown>, options.owned);
  return fast !== null ? { ok: true, event: fast } : zodParseEvent(input);
}

/** The zod schemas alone (the schema of record; the fast path's reference in tests). */
export function zodParseEvent(input: object): ParseEventResult {
  const { head: headSchema, schemas } = zodSchemas();
  const head = headSchema.safeParse(input);
  if (!head.success) {
    return { ok: false, error: toHookboxError("EVENT_INVALID", head.error, "event") };
  }
  const parsed = schemas[head.data.event_type].safeParse(input);
  if (!parsed.success) {
    return { ok: false, error: toHookboxError("EVENT_INVALID", parsed.error, "event") };
  }
  return { ok: true, event: parsed.data };
}

/**
 * {@linkcode parseEvent} for code that may run in the bundled CLI, where zod
 * is loaded on demand (`_zod.ts`): an event the fast path accepts needs no
 * zod; any other is validated after `loadZod()`.
 */
export async function parseEventAsync(input: unknown): Promise<HookEvent> {
  if (typeof input === "object" && input !== null && !Array.isArray(input)) {
    if (tooWide(input) === null && tooDeepAt(input) === null) {
      const fast = fastParseEvent(input as Record<string, unknown>);
      if (fast !== null) return fast;
    }
  }
  await loadZod();
  return parseEvent(input);
}

/** Validates an event and throws `HookboxError("EVENT_INVALID")` naming the field. */
export function parseEvent(input: unknown): HookEvent {
  const result = tryParseEvent(input);
  if (!result.ok) throw result.error;
  return result.event;
}

/**
 * Parses event JSON text into a plain object, not yet validated (callers may
 * adjust fields first). Bad JSON is `EVENT_JSON_INVALID`; anything but an
 * object is `EVENT_INVALID`.
 */
export function parseEventObject(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new HookboxError(
      "EVENT_JSON_INVALID",
      `event is not valid JSON: ${(err as Error).message}`,
    );
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new HookboxError("EVENT_INVALID", "event must be a JSON object");
  }
  return value as Record<string, unknown>;
}

/** Parses and validates event JSON text (`EVENT_JSON_INVALID` / `EVENT_INVALID`). */
export function parseEventJson(text: string): HookEvent {
  return parseEvent(parseEventObject(text));
}
