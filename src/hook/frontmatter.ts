/**
 * Splits a HOOK.md into YAML frontmatter and Markdown body and validates the
 * frontmatter against the manifest schema.
 *
 * @module
 */
import { parse as parseYaml } from "yaml";
import { HookboxError } from "../errors.ts";
import { type Manifest, manifestSchema } from "../schema/manifest.ts";
import { toHookboxError } from "../schema/_issues.ts";

const FENCE = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)([\s\S]*)$/;

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
  let data: unknown;
  try {
    data = parseYaml(match[1] ?? "", { maxAliasCount: 100 });
  } catch (err) {
    throw new HookboxError(
      "HOOK_MANIFEST_INVALID",
      `frontmatter is not valid YAML: ${(err as Error).message.split("\n")[0]}`,
      { path, cause: err },
    );
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new HookboxError("HOOK_MANIFEST_INVALID", "frontmatter must be a YAML mapping", { path });
  }
  const parsed = manifestSchema.safeParse(data);
  if (!parsed.success) throw toHookboxError("HOOK_MANIFEST_INVALID", parsed.error, "HOOK.md", path);
  return { manifest: parsed.data, body: (match[2] ?? "").trim() };
}
