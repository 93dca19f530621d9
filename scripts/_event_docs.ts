/**
 * The event reference made from the zod schemas that validate events:
 * `docs/events.md` (a table of fields per event) and one JSON Schema per
 * event in `docs/events/`. `scripts/event_schemas.ts` writes them;
 * `tests/core/schema/event_docs_test.ts` fails when they drift.
 *
 * @module
 */
import { eventJsonSchemas } from "../packages/core/schema/event.ts";
import { EVENT_TYPES } from "../packages/core/schema/event_types.ts";
import { loadZod } from "../packages/core/schema/loaders.ts";

type Schema = Record<string, unknown>;

/** What each event is for, one line (SPEC §1). */
const ABOUT: Record<string, string> = {
  "pre-session": "a session starts",
  "post-session": "a session ends",
  "pre-agent-turn": "the user's prompt, before the agent works on it",
  "post-agent-turn": "the agent's answer to a turn",
  "pre-agent-turn-stop": "the agent wants to stop; a block makes it go on (a stop gate)",
  "post-agent-turn-stop": "the agent stopped",
  "pre-tool-call": "a tool call, before it runs: block it or rewrite its input",
  "post-tool-call": "a tool call's output, before the model sees it: rewrite it",
  "post-tool-call-failure": "a tool call that failed",
  "pre-subagent": "a subagent is started",
  "post-subagent": "a subagent finished",
  "pre-context-compact": "the context is about to be compacted",
  "post-context-compact": "the context was compacted",
  "pre-llm-call": "a model request, before it is sent",
  "post-llm-call": "a model response",
  "post-llm-call-failure": "a model request that failed",
};

function typeOf(s: Schema): string {
  if (s.const !== undefined) return `\`${JSON.stringify(s.const)}\``;
  if (Array.isArray(s.anyOf)) return (s.anyOf as Schema[]).map(typeOf).join(" or ");
  const type = s.type as string | undefined;
  if (type === "array") return `array of ${typeOf((s.items ?? {}) as Schema)}`;
  if (type === "object") return "object";
  if (type === "integer" && s.minimum === 0) return "integer ≥ 0";
  return type ?? "any JSON";
}

function notes(s: Schema): string {
  const out: string[] = [];
  if (typeof s.maxLength === "number") out.push(`at most ${s.maxLength} characters`);
  if (typeof s.pattern === "string" && s.pattern.includes("\\d{4}")) out.push("RFC 3339");
  if (s.default !== undefined) out.push(`default ${JSON.stringify(s.default)}`);
  return out.join("; ");
}

/** The files of the event reference, by path from the repository root. */
export async function eventDocs(): Promise<Map<string, string>> {
  await loadZod();
  const schemas = eventJsonSchemas();
  const files = new Map<string, string>();
  const md = [
    "# Events",
    "",
    "Every event hookbox takes (SPEC §1), with its fields, made from the schemas that validate them",
    "(`packages/core/schema/event.ts`; this page and `docs/events/*.schema.json` are written by",
    "`deno run -A scripts/event_schemas.ts`, and a test fails when they drift). Every event also",
    "keeps fields it does not list (they reach the hooks as sent). `event_type` takes the snake_case",
    "spelling too (`pre_tool_call`).",
    "",
  ];
  for (const type of EVENT_TYPES) {
    const schema = schemas[type];
    files.set(`docs/events/${type}.schema.json`, JSON.stringify(schema, null, 2) + "\n");
    const properties = schema.properties as Record<string, Schema>;
    const required = new Set(schema.required as string[]);
    md.push(
      `## \`${type}\``,
      "",
      `${ABOUT[type] ?? ""} — [JSON Schema](events/${type}.schema.json)`,
      "",
    );
    md.push("| field | type | required | notes |", "| --- | --- | --- | --- |");
    for (const [name, field] of Object.entries(properties)) {
      md.push(
        `| \`${name}\` | ${typeOf(field)} | ${required.has(name) ? "yes" : ""} | ${notes(field)} |`,
      );
    }
    md.push("");
  }
  files.set("docs/events.md", md.join("\n"));
  return files;
}
