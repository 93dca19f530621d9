/**
 * Hook stdout control fields (SPEC §3).
 *
 * @module
 */
import type { z } from "zod";
import { zod } from "./_zod.ts";
import { MAX_JSON_DEPTH, tooDeepAt } from "./depth.ts";
import { HookboxError } from "../errors.ts";
import { toHookboxError } from "./issues.ts";

/** The control object a hook may print on stdout with exit 0 (built at first use). */
function buildControlSchema() {
  const z = zod();
  const injectItem = z.looseObject({
    role: z.enum(["system", "user", "assistant"]).default("system"),
    content: z.string(),
    persistent: z.boolean().default(false),
  });
  return z.looseObject({
    decision: z.enum(["allow", "block", "deny"]).transform((d) => d === "deny" ? "block" : d)
      .optional(),
    reason: z.string().optional(),
    modified_input: z.unknown().optional(),
    modified_output: z.unknown().optional(),
    inject: z.array(injectItem).optional(),
    disable_tools: z.array(z.string()).optional(),
    enable_tools: z.array(z.string()).optional(),
    store: z.record(z.string(), z.unknown()).optional(),
  });
}

let built: ReturnType<typeof buildControlSchema> | null = null;

/**
 * The control object a hook may print on stdout with exit 0. Built at its
 * first use: most calls print nothing or plain text, and a one-shot process
 * or an edge Worker starting up should not pay for it.
 */
export function controlSchema(): ReturnType<typeof buildControlSchema> {
  return built ??= buildControlSchema();
}

/** Parsed control fields. */
export type Control = z.infer<ReturnType<typeof controlSchema>>;
/** One message to inject into the agent's context. */
export interface InjectItem {
  /** Who the message is from. */
  role: "system" | "user" | "assistant";
  /** Its text. */
  content: string;
  /** Kept in the conversation (true) or only in the next model call. */
  persistent: boolean;
  /** Further fields a hook printed, passed through. */
  [key: string]: unknown;
}

// The interface above is the schema's output, checked both ways.
type ParsedInject = NonNullable<Control["inject"]>[number];
const _injectMatches: [ParsedInject, InjectItem] extends [InjectItem, ParsedInject] ? true
  : never = true;

/** What a hook's stdout turned out to be. */
export type StdoutReading =
  | { kind: "control"; control: Control }
  | { kind: "text"; note?: string }
  | { kind: "invalid"; error: HookboxError };

/**
 * False when {@linkcode readStdout} answers without validating anything:
 * only output that opens with `{` may be a control object, and an empty one
 * (`{}`, what a JS function hook that allows prints) has nothing to validate
 * (the bundled CLI loads zod, about 5 ms of a one-shot call, before reading
 * any other).
 */
export function mayBeControl(stdout: string): boolean {
  return /^\s*\{/.test(stdout) && !EMPTY_OBJECT.test(stdout);
}

/** An empty JSON object, with any whitespace around and inside it. */
const EMPTY_OBJECT = /^\s*\{\s*\}\s*$/;

/**
 * Reads stdout: a JSON object is control fields, anything else is plain text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readStdout } from "./output.ts";
 * const r = readStdout('{"decision":"deny","reason":"no"}');
 * assert(r.kind === "control" && r.control.decision === "block");
 * assert(readStdout("hello").kind === "text");
 * ```
 */
export function readStdout(stdout: string): StdoutReading {
  const text = stdout.trim();
  if (!text.startsWith("{")) return { kind: "text" };
  if (EMPTY_OBJECT.test(text)) return { kind: "control", control: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    // Text, as SPEC §3 says, but likely a mistake (`{decision: block}`): the record says so.
    return {
      kind: "text",
      note: `stdout starts with "{" but is not JSON (${(err as Error).message}); read as text`,
    };
  }
  const deep = tooDeepAt(value);
  if (deep !== null) {
    const message = `hook output nests deeper than ${MAX_JSON_DEPTH} levels at ${deep}`;
    return { kind: "invalid", error: new HookboxError("JSON_TOO_DEEP", message, { field: deep }) };
  }
  const parsed = controlSchema().safeParse(value);
  if (!parsed.success) {
    return {
      kind: "invalid",
      error: toHookboxError("HOOK_OUTPUT_INVALID", parsed.error, "hook output"),
    };
  }
  return { kind: "control", control: parsed.data };
}
