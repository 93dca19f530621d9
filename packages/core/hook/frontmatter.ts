/**
 * Splits a HOOK.md into YAML frontmatter and Markdown body and validates the
 * frontmatter against the manifest schema.
 *
 * @module
 */
import { isMap, isScalar, parseDocument, visit } from "yaml";
import { nearest } from "../schema/near.ts";
import { HookboxError } from "../errors.ts";
import { type Manifest, manifestSchema } from "../schema/manifest.ts";
import { unstorable, unstorableAt } from "../schema/storable.ts";
import { toHookboxError } from "../schema/issues.ts";

const FENCE = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)([\s\S]*)$/;

/**
 * Cap on the frontmatter, in UTF-16 code units. A real manifest is under 2 KB;
 * the cap bounds YAML parsing (tens of milliseconds at most), which discovery
 * pays for every hook folder of a repository.
 */
export const MAX_FRONTMATTER_CHARS = 16 * 1024;
/** Aliases a frontmatter may expand; bounds "billion laughs" documents. */
const MAX_ALIASES = 100;
/**
 * Deepest nesting of `[` and `{` in a frontmatter (counted in quoted text
 * too: a real manifest nests two or three). The YAML parser recurses per
 * level: 16,000 brackets took it 30-70 ms to run out of stack.
 */
export const MAX_FLOW_DEPTH = 64;

/** A parsed HOOK.md. */
export interface HookDocument {
  manifest: Manifest;
  body: string;
}

/**
 * Parses HOOK.md text; throws `HOOK_MANIFEST_INVALID` naming the field.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseHookMd } from "./frontmatter.ts";
 * const doc = parseHookMd("---\nname: a\ndescription: d\ntrigger: pre-tool-call\n---\nBody");
 * assert(doc.manifest.priority === 100 && doc.body === "Body");
 * ```
 */
export function parseHookMd(text: string, path = "HOOK.md"): HookDocument {
  const match = FENCE.exec(text.replace(/^\uFEFF/, ""));
  if (!match) {
    throw new HookboxError(
      "HOOK_MANIFEST_INVALID",
      "HOOK.md must start with YAML frontmatter between --- lines",
      { path },
    );
  }
  const data = readYaml(match[1] ?? "", path);
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new HookboxError("HOOK_MANIFEST_INVALID", "frontmatter must be a YAML mapping", { path });
  }
  const parsed = manifestSchema().safeParse(data);
  if (!parsed.success) {
    const error = toHookboxError("HOOK_MANIFEST_INVALID", parsed.error, "HOOK.md", path);
    const issue = parsed.error.issues[0];
    if (issue?.code !== "unrecognized_keys") throw error;
    // A misspelt key: name the one it probably is.
    const known = KNOWN_KEYS[issue.path.join(".")] ?? [];
    const near = issue.keys.map((key) => nearest(key, known)).find((k) => k !== undefined);
    const hint = near !== undefined
      ? `; did you mean "${near}"?`
      : `; known keys: ${known.join(", ")}`;
    throw new HookboxError("HOOK_MANIFEST_INVALID", `${error.message}${hint}`, {
      path,
      ...(error.field === undefined ? {} : { field: error.field }),
    });
  }
  const body = (match[2] ?? "").trim();
  // YAML escapes ("\0", "\ud800") and raw bytes can make text no store holds (schema/storable.ts).
  const bad = unstorableAt(data) ?? (unstorable(body) ? "(body)" : null);
  if (bad !== null) {
    throw new HookboxError(
      "HOOK_MANIFEST_INVALID",
      `${bad} holds a NUL or a lone UTF-16 surrogate, which no store can hold`,
      bad === "(body)" ? { path } : { path, field: bad },
    );
  }
  return { manifest: parsed.data, body };
}

/** The keys HOOK.md's frontmatter and its mappings take (for "did you mean"). */
const KNOWN_KEYS: Record<string, string[]> = {
  "": [
    "name",
    "description",
    "trigger",
    "matcher",
    "timeout",
    "async",
    "priority",
    "on_error",
    "limits",
    "sha256",
    "isolation",
    "allowed_hosts",
    "env",
    "inject",
  ],
  matcher: ["tool", "pattern"],
  limits: ["memory_mb", "fuel", "output_kb"],
  inject: ["role", "persistent", "scope"],
};

/**
 * Line and column of HOOK.md (the frontmatter starts on its second line) for
 * offset `at` of the frontmatter, and a code frame: that line with a caret
 * under the column.
 */
function where(source: string, at: number): { line: number; column: number; frame: string } {
  const before = source.slice(0, at);
  const line = before.split("\n").length + 1; // + the opening --- line
  const column = at - before.lastIndexOf("\n");
  const text = source.split("\n")[line - 2] ?? "";
  const gutter = " ".repeat(String(line).length);
  // At most 200 characters of the line, around the column.
  const from = Math.max(0, Math.min(column - 100, text.length - 200));
  const frame = `\n${line} | ${text.slice(from, from + 200)}\n${gutter} | ${
    " ".repeat(column - 1 - from)
  }^`;
  return { line, column, frame };
}

/** The deepest nesting of `[` and `{` in `source`, and where it first passes the cap. */
function flowDepth(source: string): { deepest: number; at: number } {
  let depth = 0;
  let deepest = 0;
  let at = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source.charCodeAt(i);
    if (c === 0x5b || c === 0x7b) {
      if (++depth > deepest) {
        deepest = depth;
        if (depth === MAX_FLOW_DEPTH + 1) at = i;
      }
    } else if ((c === 0x5d || c === 0x7d) && depth > 0) depth--;
  }
  return { deepest, at };
}

/**
 * Parses frontmatter YAML in linear time. The YAML library's own duplicate-key
 * check is quadratic in the keys of a mapping (a second for a 50 KB list of
 * keys), so it is off and duplicates are found here, with a set per mapping.
 * Warnings (unknown tags, ...) are not printed; errors are the first one.
 */
function readYaml(source: string, path: string): unknown {
  const invalid = (message: string, cause?: unknown) =>
    new HookboxError("HOOK_MANIFEST_INVALID", message, { path, cause });
  if (source.length > MAX_FRONTMATTER_CHARS) {
    throw invalid(
      `frontmatter is ${source.length} characters, over the ${MAX_FRONTMATTER_CHARS} cap`,
    );
  }
  const depth = flowDepth(source);
  if (depth.deepest > MAX_FLOW_DEPTH) {
    const { line, column } = where(source, depth.at);
    throw invalid(
      `frontmatter nests [ and { more than ${MAX_FLOW_DEPTH} deep ` +
        `(at line ${line}, column ${column})`,
    );
  }
  try {
    const doc = parseDocument(source, {
      uniqueKeys: false,
      logLevel: "silent",
      prettyErrors: false,
    });
    const [error] = doc.errors;
    if (error) throw error;
    const duplicate = firstDuplicateKey(doc);
    if (duplicate !== null) throw invalid(`frontmatter repeats the key "${duplicate}"`);
    return doc.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (err) {
    if (err instanceof HookboxError) throw err;
    const message = err instanceof Error ? err.message.split("\n")[0] : String(err);
    const at = (err as { pos?: [number, number] }).pos?.[0];
    if (at === undefined) throw invalid(`frontmatter is not valid YAML: ${message}`, err);
    const { line, column, frame } = where(source, at);
    throw invalid(
      `frontmatter is not valid YAML at line ${line}, column ${column}: ${message}${frame}`,
      err,
    );
  }
}

/** The first key a mapping of `doc` repeats (scalar keys), or null. */
function firstDuplicateKey(doc: ReturnType<typeof parseDocument>): string | null {
  let found: string | null = null;
  visit(doc, {
    Map(_, map) {
      if (!isMap(map)) return;
      const keys = new Set<unknown>();
      for (const pair of map.items) {
        const key = isScalar(pair.key) ? pair.key.value : pair.key;
        if (keys.has(key)) {
          found = String(key);
          return visit.BREAK;
        }
        keys.add(key);
      }
    },
  });
  return found;
}
