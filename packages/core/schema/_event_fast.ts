/**
 * A hand-written fast path for event validation. zod stays the schema of
 * record and the source of every error: this path only ever accepts what the
 * zod schemas of `event.ts` accept, producing the same object (same keys in
 * the same order, defaults filled in), and answers null — "ask zod" — for
 * anything it is not sure of. `tests/core/schema/event_fast_test.ts` checks that
 * against zod on generated events.
 *
 * @module
 */
import { type EventType, normalizeEventType } from "./event_types.ts";
import { type HookEvent, MAX_SESSION_ID, MAX_WORK_DIR } from "./event.ts";
import { unstorable } from "./storable.ts";

type Check = (value: unknown) => boolean;

interface Field {
  name: string;
  check: Check;
  optional?: boolean;
  /** Value when absent (the zod `.default`). */
  fallback?: unknown;
  /** How zod copies the value (records and loose objects are copied, not shared). */
  copy?: (value: unknown) => unknown;
  /**
   * The copy only makes a new object with the same keys in the same order:
   * an input the caller owns may be kept instead.
   */
  plain?: boolean;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const str: Check = (v) => typeof v === "string";
const nonEmpty: Check = (v) => typeof v === "string" && v.length >= 1;
const count: Check = (v) => Number.isSafeInteger(v) && (v as number) >= 0;
const present: Check = (v) => v !== undefined;
/** A record without `__proto__` (zod copies such keys its own way: left to zod). */
const record: Check = (v) =>
  isObject(v) && Object.getPrototypeOf(v) === Object.prototype && !Object.hasOwn(v, "__proto__");
const copyRecord = (v: unknown) => ({ ...(v as Record<string, unknown>) });
/** Chat messages: loose objects with a string `role` and a `content` key. */
const messages: Check = (v) =>
  Array.isArray(v) &&
  v.every((m) =>
    record(m) && typeof m.role === "string" && Object.hasOwn(m, "content") &&
    m.content !== undefined
  );
const copyMessages = (v: unknown) =>
  (v as Record<string, unknown>[]).map(({ role, content, ...rest }) => ({
    role,
    content,
    ...rest,
  }));
const array: Check = (v) => Array.isArray(v);
const copyArray = (v: unknown) => [...(v as unknown[])];

const COMMON: Field[] = [
  { name: "timestamp", check: (v) => typeof v === "string" && RFC3339.test(v), optional: true },
  {
    name: "session_id",
    check: (v) => nonEmpty(v) && (v as string).length <= MAX_SESSION_ID && !unstorable(v as string),
  },
  {
    name: "work_dir",
    check: (v) => nonEmpty(v) && (v as string).length <= MAX_WORK_DIR,
    optional: true,
  },
  { name: "tenant_id", check: (v) => nonEmpty(v) && (v as string).length <= 128, optional: true },
  { name: "turn_id", check: str, optional: true },
  { name: "store", check: record, optional: true, copy: copyRecord, plain: true },
];
const TOOL: Field[] = [
  { name: "tool_name", check: nonEmpty },
  { name: "tool_input", check: record, copy: copyRecord, plain: true },
  { name: "tool_use_id", check: str, optional: true },
];
const LLM: Field[] = [
  { name: "messages", check: messages, copy: copyMessages },
  { name: "tools", check: array, optional: true, copy: copyArray, plain: true },
  { name: "model", check: str, optional: true },
  { name: "iteration", check: count, optional: true },
];
const json = (name: string): Field => ({ name, check: present });

/** Each event's own fields, in the order of the zod shapes in `event.ts`. */
const EXTRA: Record<EventType, Field[]> = {
  "pre-session": [{ name: "source", check: str, optional: true }],
  "post-session": [{ name: "reason", check: str, optional: true }],
  "pre-agent-turn": [{ name: "prompt", check: str }],
  "post-agent-turn": [json("response")],
  "pre-agent-turn-stop": [
    { name: "last_message", check: str },
    { name: "stop_count", check: count, fallback: 0 },
  ],
  "post-agent-turn-stop": [{ name: "last_message", check: str }],
  "pre-tool-call": TOOL,
  "post-tool-call": [...TOOL, json("tool_output")],
  "post-tool-call-failure": [...TOOL, json("error")],
  "pre-subagent": [{ name: "subagent_name", check: nonEmpty }, json("task")],
  "post-subagent": [{ name: "subagent_name", check: nonEmpty }, json("task"), json("result")],
  "pre-context-compact": [{ name: "message_count", check: count }],
  "post-context-compact": [{ name: "summary", check: str }, {
    name: "compacted_count",
    check: count,
  }],
  "pre-llm-call": LLM,
  "post-llm-call": [...LLM, json("response"), { name: "usage", check: present, optional: true }],
  "post-llm-call-failure": [
    { ...LLM[0]!, optional: true },
    ...LLM.slice(1),
    json("error"),
  ],
};

const SHAPES = Object.fromEntries(
  Object.entries(EXTRA).map(([type, extra]) => {
    const fields = [...COMMON, ...extra];
    return [type, { fields, names: new Set(["event_type", ...fields.map((f) => f.name)]) }];
  }),
) as Record<EventType, { fields: Field[]; names: Set<string> }>;

/**
 * The validated event when the fast path is sure, else null (then zod decides).
 * With `owned` (the caller hands `input` over and keeps no reference) records
 * and arrays are kept rather than copied: a request body of a megabyte of
 * small keys took 22 ms to copy on the thread that answers every tenant.
 */
export function fastParseEvent(input: Record<string, unknown>, owned = false): HookEvent | null {
  if (Object.getPrototypeOf(input) !== Object.prototype || Object.hasOwn(input, "__proto__")) {
    return null;
  }
  const raw = input.event_type;
  const type = typeof raw === "string" ? normalizeEventType(raw) : null;
  if (type === null) return null;
  const { fields, names } = SHAPES[type];
  const out: Record<string, unknown> = { event_type: type };
  for (const field of fields) {
    if (Object.hasOwn(input, field.name)) {
      const value = input[field.name];
      if (value === undefined || !field.check(value)) return null;
      out[field.name] = field.copy && !(owned && field.plain) ? field.copy(value) : value;
    } else if (field.fallback !== undefined) out[field.name] = field.fallback;
    else if (!field.optional) return null;
  }
  for (const key of Object.keys(input)) if (!names.has(key)) out[key] = input[key];
  return out as HookEvent;
}
