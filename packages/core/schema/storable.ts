/**
 * Text every store can hold. PostgreSQL refuses a NUL (U+0000) in TEXT and
 * JSONB, and both stores get lone UTF-16 surrogates wrong (PostgreSQL refuses
 * them in JSONB, SQLite would keep bytes that are not UTF-8): one tenant's
 * `session_id` or hook output must never fail a write shared with others.
 * What a tenant sends is refused by name (`unstorableAt`); what a hook
 * prints is made storable (`storable`), the same on both stores.
 *
 * @module
 */

// deno-lint-ignore no-control-regex
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, "g");

/**
 * True when `text` holds a NUL or a lone surrogate.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { unstorable } from "./storable.ts";
 * assert(unstorable("a\u0000b") && unstorable("\ud800") && !unstorable("😀"));
 * ```
 */
export function unstorable(text: string): boolean {
  return UNSTORABLE.test(text);
}

/**
 * `text` with each NUL and lone surrogate replaced by U+FFFD.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { storable } from "./storable.ts";
 * assert.equal(storable("a\u0000b\ud800"), "a\ufffdb\ufffd");
 * ```
 */
export function storable(text: string): string {
  return unstorable(text) ? text.replace(UNSTORABLE_ALL, "\uFFFD") : text;
}

/**
 * The dotted path of the first string (key or value) in `value` that holds a
 * NUL or a lone surrogate, or null. Iterative; `value` must be acyclic JSON.
 */
export function unstorableAt(value: unknown): string | null {
  const stack: [unknown, string][] = [[value, ""]];
  while (stack.length > 0) {
    const [node, path] = stack.pop()!;
    if (typeof node === "string") {
      if (unstorable(node)) return path;
      continue;
    }
    if (typeof node !== "object" || node === null) continue;
    for (const [key, child] of Object.entries(node)) {
      const at = path === "" ? key : `${path}.${key}`;
      if (unstorable(key)) return at;
      stack.push([child, at]);
    }
  }
  return null;
}
