"use strict";
/**
 * Shape-preserving walk over JSON values: every string (and, for object
 * members, its key) is offered to a callback that may replace it.
 */

/**
 * Returns a copy of `value` where each string `s` found under key `key`
 * (null at the top level and inside arrays) is replaced by `fn(s, key)`.
 * Numbers, booleans and null are kept; object keys are never rewritten.
 */
function mapStrings(value, fn, key) {
  const here = key === undefined ? null : key;
  if (typeof value === "string") return fn(value, here);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, fn, here));
  if (value !== null && typeof value === "object") {
    const out = {};
    for (const name of Object.keys(value)) out[name] = mapStrings(value[name], fn, name);
    return out;
  }
  return value;
}

module.exports = { mapStrings };
