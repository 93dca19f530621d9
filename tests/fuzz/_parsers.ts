/**
 * Fuzz targets for every parser at hookbox's edges: event JSON, HOOK.md, a
 * hook's stdout, and plugin bytes. Each target pairs a fast-check input
 * generator (random text, near-valid documents with random values, mutations
 * and deep nesting) with a check that the parser either succeeds with a
 * well-formed value or fails with a `HookboxError` carrying one of the codes
 * that parser is documented to use. Anything else — another exception, an
 * unknown code, a malformed success — is a finding.
 *
 * @module
 */
import fc from "fast-check";
import { stringify as toYaml } from "yaml";
import { type ErrorCode, isHookboxError } from "../../packages/core/errors.ts";
import { parseHookMd } from "../../packages/core/hook/frontmatter.ts";
import { PromiseCache } from "../../packages/runtime-wasm/_cache.ts";
import { prepare } from "../../packages/runtime-wasm/_loader.ts";
import { parseEventJson } from "../../packages/core/schema/event.ts";
import { EVENT_TYPES } from "../../packages/core/schema/event_types.ts";
import { readStdout } from "../../packages/core/schema/output.ts";
import { wat } from "../rewriter/_wat.ts";

/** A parser that failed in a way no caller can handle: not a coded error. */
export class Finding extends Error {}

/** One parser under fuzz. */
export interface Target<T> {
  name: string;
  input: fc.Arbitrary<T>;
  /** Throws {@linkcode Finding} when the parser misbehaves on `input`. */
  check(input: T): void | Promise<void>;
}

/** Throws a {@linkcode Finding} unless `err` is a HookboxError with one of `allowed`. */
export function expectCoded(err: unknown, allowed: readonly ErrorCode[]): void {
  if (!isHookboxError(err)) {
    throw new Finding(`uncoded ${err instanceof Error ? err.name : typeof err}: ${String(err)}`);
  }
  if (!allowed.includes(err.code)) throw new Finding(`unexpected code ${err.code}: ${err.message}`);
  if (typeof err.message !== "string" || err.message.length === 0) {
    throw new Finding(`${err.code} without a message`);
  }
}

/** Applies a few random edits to text: cut, insert, duplicate, delete. */
function mutatedText(source: fc.Arbitrary<string>): fc.Arbitrary<string> {
  const edit = fc.record({
    kind: fc.constantFrom("cut", "insert", "dup", "delete"),
    at: fc.nat(),
    text: fc.constantFrom(
      "{",
      "}",
      "[",
      "]",
      '"',
      ":",
      ",",
      "\\",
      "\n",
      "---",
      "&a",
      "*a",
      "\u0000",
    ),
  });
  return fc.tuple(source, fc.array(edit, { maxLength: 3 })).map(([text, edits]) => {
    let out = text;
    for (const { kind, at, text: piece } of edits) {
      const i = out.length === 0 ? 0 : at % out.length;
      if (kind === "cut") out = out.slice(0, i);
      else if (kind === "insert") out = out.slice(0, i) + piece + out.slice(i);
      else if (kind === "dup") out = out.slice(0, i) + out.slice(i, i + 16) + out.slice(i);
      else out = out.slice(0, i) + out.slice(i + 1);
    }
    return out;
  });
}

/** JSON text nested `depth` levels deep around `core`. */
function nested(depth: number, open: string, close: string, core = "1"): string {
  return open.repeat(depth) + core + close.repeat(depth);
}

const value = fc.oneof(fc.jsonValue({ maxDepth: 4 }), fc.constant(null), fc.string());
const eventType = fc.oneof(
  fc.constantFrom(...EVENT_TYPES),
  fc.constantFrom("pre_tool_call", "PreToolUse", "stop", "PRE-TOOL-CALL"),
  fc.string({ maxLength: 20 }),
);

/** Event JSON: `parseEventJson` (what the CLI and the service read). */
export const eventJson: Target<string> = {
  name: "event JSON",
  input: fc.oneof(
    fc.string(),
    fc.json(),
    mutatedText(
      fc.record({
        event_type: eventType,
        session_id: fc.oneof(fc.string({ maxLength: 20 }), value),
        tool_name: fc.oneof(fc.constantFrom("Bash", "Write"), value),
        tool_input: fc.oneof(fc.dictionary(fc.string({ maxLength: 8 }), value), value),
        prompt: value,
        work_dir: value,
        store: value,
      }, { requiredKeys: ["event_type"] }).map((e) => JSON.stringify(e)),
    ),
    fc.tuple(fc.nat(400), fc.constantFrom(["[", "]"], ['{"a":', "}"])).map(([depth, [o, c]]) =>
      `{"event_type":"pre-tool-call","session_id":"s","tool_name":"Bash","tool_input":{"x":${
        nested(depth, o!, c!)
      }}}`
    ),
  ),
  check(text) {
    try {
      const event = parseEventJson(text);
      if (!EVENT_TYPES.includes(event.event_type)) {
        throw new Finding(`accepted event_type ${event.event_type}`);
      }
      if (typeof event.session_id !== "string") throw new Finding("accepted a non-string session");
      JSON.stringify(event);
    } catch (err) {
      if (err instanceof Finding) throw err;
      expectCoded(err, ["EVENT_JSON_INVALID", "EVENT_INVALID", "JSON_TOO_DEEP"]);
    }
  },
};

const manifestish = fc.record({
  name: fc.oneof(fc.constantFrom("guard", "a-b", "x"), value),
  description: fc.oneof(fc.constant("d"), value),
  trigger: fc.oneof(eventType, fc.array(eventType, { maxLength: 3 }), value),
  priority: fc.oneof(fc.integer(), value),
  matcher: fc.oneof(
    fc.record({ tool: fc.oneof(fc.constantFrom("Bash|Write", "(a+)+$", "[", "(?=x)"), value) }),
    value,
  ),
  timeout: fc.oneof(fc.nat(), value),
  on_error: fc.oneof(fc.constantFrom("open", "closed"), value),
  isolation: fc.oneof(fc.constantFrom("fresh", "warm"), value),
  limits: fc.oneof(
    fc.record({ fuel: fc.integer(), memory_mb: fc.integer(), output_kb: fc.integer() }, {
      requiredKeys: [],
    }),
    value,
  ),
  inject: value,
  allowed_hosts: fc.oneof(fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }), value),
  extra: value,
}, { requiredKeys: [] });

/** YAML that expands exponentially through aliases ("billion laughs"). */
const aliasBomb = fc.integer({ min: 1, max: 12 }).map((levels) => {
  const lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"];
  for (let i = 1; i <= levels; i++) {
    lines.push(`a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(", ")}]`);
  }
  return lines.join("\n");
});

/** HOOK.md text: `parseHookMd` (discovery, validation, the service's uploads). */
export const hookMd: Target<string> = {
  name: "HOOK.md",
  input: fc.oneof(
    fc.string(),
    mutatedText(
      fc.tuple(manifestish.map((m) => toYaml(m)), fc.string({ maxLength: 40 })).map(([y, body]) =>
        `---\n${y}---\n${body}`
      ),
    ),
    fc.tuple(fc.string(), fc.string()).map(([y, body]) => `---\n${y}\n---\n${body}`),
    aliasBomb.map((y) => `---\nname: a\ndescription: d\ntrigger: pre-tool-call\n${y}\n---\n`),
    fc.nat(300).map((d) => `---\nname: a\nx: ${nested(d, "[", "]")}\n---\n`),
  ),
  check(text) {
    try {
      const doc = parseHookMd(text);
      if (typeof doc.manifest.name !== "string" || typeof doc.body !== "string") {
        throw new Finding("accepted a manifest without a name");
      }
    } catch (err) {
      if (err instanceof Finding) throw err;
      expectCoded(err, ["HOOK_MANIFEST_INVALID"]);
    }
  },
};

const controlish = fc.record({
  decision: fc.oneof(fc.constantFrom("allow", "block", "deny", "ask", "approve"), value),
  reason: value,
  modified_input: value,
  modified_output: value,
  inject: fc.oneof(
    fc.array(
      fc.record({ role: fc.oneof(fc.constantFrom("system", "user"), value), content: value }),
    ),
    value,
  ),
  store: value,
  disable_tools: fc.oneof(fc.array(fc.string({ maxLength: 8 })), value),
  enable_tools: value,
}, { requiredKeys: [] });

/** A hook's stdout: `readStdout` (every call that exits 0). It never throws. */
export const hookStdout: Target<string> = {
  name: "hook stdout",
  input: fc.oneof(
    fc.string(),
    fc.json(),
    mutatedText(controlish.map((c) => JSON.stringify(c))),
    fc.tuple(fc.nat(400), fc.constantFrom(["[", "]"], ['{"a":', "}"])).map(([d, [o, c]]) =>
      `{"decision":"block","store":{"k":${nested(d, o!, c!)}}}`
    ),
  ),
  check(text) {
    let reading;
    try {
      reading = readStdout(text);
    } catch (err) {
      throw new Finding(`readStdout threw: ${String(err)}`);
    }
    if (reading.kind === "invalid") {
      expectCoded(reading.error, ["HOOK_OUTPUT_INVALID", "JSON_TOO_DEEP"]);
    } else if (reading.kind === "control") {
      const d = reading.control.decision;
      if (d !== undefined && d !== "allow" && d !== "block") throw new Finding(`decision ${d}`);
    } else if (reading.kind !== "text") {
      throw new Finding(`unknown reading ${JSON.stringify(reading)}`);
    }
  },
};

const SEEDS = ["guard_wasi", "guard_extism", "rewrite_extism", "try_table_refund", "table_many"];
const seedModules: Uint8Array[] = await Promise.all(
  SEEDS.map(async (name) =>
    wat(await Deno.readTextFile(new URL(`../corpus/${name}.wat`, import.meta.url)), name)
  ),
);

/** Byte edits of a valid module: flips, overwrites, inserts, deletes, cuts. */
const pluginInput = fc.tuple(
  fc.nat(SEEDS.length - 1),
  fc.array(
    fc.record({
      kind: fc.constantFrom("flip", "set", "insert", "delete", "cut", "leb"),
      at: fc.nat(),
      byte: fc.nat(255),
    }),
    { minLength: 1, maxLength: 4 },
  ),
).map(([seed, edits]) => {
  let bytes = Array.from(seedModules[seed]!);
  for (const { kind, at, byte } of edits) {
    const i = bytes.length === 0 ? 0 : at % bytes.length;
    if (kind === "flip") bytes[i] = (bytes[i] ?? 0) ^ (1 << (byte % 8));
    else if (kind === "set") bytes[i] = byte;
    else if (kind === "insert") bytes.splice(i, 0, byte);
    else if (kind === "delete") bytes.splice(i, 1);
    else if (kind === "cut") bytes = bytes.slice(0, i);
    // A huge LEB128 count or size where one was: 0xff 0xff 0xff 0xff 0x0f.
    else bytes.splice(i, 1, 0xff, 0xff, 0xff, 0xff, 0x0f);
  }
  return new Uint8Array(bytes);
});

const modules = new PromiseCache<WebAssembly.Module>(8);

/** Plugin bytes: the loader's `prepare` (inspect, check, instrument, compile). */
export const pluginBytes: Target<Uint8Array> = {
  name: "plugin bytes",
  input: fc.oneof(
    { weight: 8, arbitrary: pluginInput },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }) },
    {
      weight: 1,
      arbitrary: fc.uint8Array({ maxLength: 64 }).map((tail) =>
        new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, ...tail])
      ),
    },
  ),
  async check(bytes) {
    try {
      const loaded = await prepare(bytes, {
        limits: { memoryMb: 16, moduleKb: 4096 },
        compile: (b) => WebAssembly.compile(b as Uint8Array<ArrayBuffer>),
        modules,
      });
      if (!(loaded.module instanceof WebAssembly.Module)) throw new Finding("no module");
    } catch (err) {
      if (err instanceof Finding) throw err;
      expectCoded(err, [
        "PLUGIN_INVALID",
        "PLUGIN_IMPORT_DENIED",
        "PLUGIN_EXPORT_MISSING",
        "PLUGIN_FEATURE_DENIED",
        "LIMIT_MODULE",
        "LIMIT_MEMORY",
      ]);
    }
  },
};

/** Every target, in the order the script runs them. */
export const TARGETS = [eventJson, hookMd, hookStdout, pluginBytes] as const;
