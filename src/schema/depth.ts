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
