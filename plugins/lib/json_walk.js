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

/**
 * The strings of `value`, in the order `mapStrings` visits them, joined by
 * newlines, and whether one is under a key `keyTest` accepts. Looking at
 * them as one text costs a hook far less than looking at each alone (the
 * engine's overhead for a call is many times that for a character).
 */
function joinStrings(value, keyTest) {
  const texts = [];
  let keyed = false;
  const visit = (item, key) => {
    if (typeof item === "string") {
      texts.push(item);
      if (!keyed && typeof key === "string" && keyTest(key)) keyed = true;
    } else if (Array.isArray(item)) {
      for (const inner of item) visit(inner, key);
    } else if (item !== null && typeof item === "object") {
      for (const name of Object.keys(item)) visit(item[name], name);
    }
  };
  visit(value, null);
  return { text: texts.join("\n"), keyed };
}

module.exports = { mapStrings, joinStrings };
