/**
 * Nesting bounds for JSON-like values from outside (events, hook output):
 * deep nesting costs nothing to send but overflows the stack of every
 * recursive consumer downstream (printers, validators, `structuredClone`).
 * Checked iteratively, so the check itself cannot overflow, and a cyclic
 * object is refused as too deep instead of looping.
 *
 * @module
 */
import { HookboxError } from "../errors.ts";

/** Deepest nesting of arrays and objects accepted in an event or a hook's output. */
export const MAX_JSON_DEPTH = 64;

/**
 * The dotted path of the first value nested deeper than `max` in `value`, or
 * null when none is.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { tooDeepAt } from "./depth.ts";
 * assert.equal(tooDeepAt({ a: [[1]] }, 2), "a.0");
 * assert.equal(tooDeepAt({ a: [1] }, 2), null);
 * ```
 */
export function tooDeepAt(value: unknown, max = MAX_JSON_DEPTH): string | null {
  const stack: [unknown, number, string][] = [[value, 0, ""]];
  while (stack.length > 0) {
    const [node, depth, path] = stack.pop()!;
    if (typeof node !== "object" || node === null) continue;
    if (depth >= max) return path;
    for (const key of Object.keys(node)) {
      const child = (node as Record<string, unknown>)[key];
      if (typeof child === "object" && child !== null) {
        stack.push([child, depth + 1, path === "" ? key : `${path}.${key}`]);
      }
    }
  }
  return null;
}

/**
 * The deepest nesting of arrays and objects in JSON `text` (which must be
 * valid JSON): 1 for `{}`, 2 for `{"a": []}`. A value parsed from `text`
 * nests deeper than `max` exactly when this is more than `max`, and a scan of
 * the text costs a fraction of a walk over the value (a megabyte of small
 * keys: ~1.4 against 8.3 ms), so a caller that has the text can skip
 * {@linkcode tooDeepAt} when it says the value is shallow enough.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { textDepth } from "./depth.ts";
 * assert.equal(textDepth('{"a": [[1]], "b": "[[[["}'), 3);
 * assert.equal(textDepth('"\\"'), 0);
 * ```
 */
export function textDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string: skip to its closing quote, stepping over escapes.
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > deepest) deepest = depth;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}

/** Throws `JSON_TOO_DEEP` naming the field when `value` nests deeper than `max`. */
export function checkDepth(value: unknown, what: string, max = MAX_JSON_DEPTH): void {
  const at = tooDeepAt(value, max);
  if (at === null) return;
  throw new HookboxError(
    "JSON_TOO_DEEP",
    `${what} nests deeper than ${max} levels at ${at || "the top"}`,
    at === "" ? {} : { field: at },
  );
}
