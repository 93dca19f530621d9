/**
 * secret-redactor (post-tool-call): replaces secrets and PII in
 * `tool_output` by `[REDACTED:kind]` markers. A string output stays a string;
 * an object or array keeps its shape (every string inside is scanned, and
 * string values under secret-looking keys such as `password` or `api_key`
 * are redacted whole). Nothing found: exit 0, no output.
 */
import { hookFunction, respond } from "hookbox:lib/hook_io.js";
import { mapStrings } from "hookbox:lib/json_walk.js";
import { isPlaceholder, isSecretKey, marker, redactText } from "hookbox:lib/secret_patterns.js";

function redactValue(output, counts) {
  return mapStrings(output, (text, key) => {
    if (isSecretKey(key) && !isPlaceholder(text) && !text.startsWith("[REDACTED:")) {
      const kind = /passw/i.test(key) ? "password" : "credential";
      counts[kind] = (counts[kind] || 0) + 1;
      return marker(kind);
    }
    return redactText(text, counts);
  });
}

function summary(counts) {
  const kinds = Object.keys(counts);
  const total = kinds.reduce((sum, kind) => sum + counts[kind], 0);
  const list = kinds.map((kind) => (counts[kind] > 1 ? kind + " x" + counts[kind] : kind));
  return "redacted " + total + (total === 1 ? " secret" : " secrets") + " (" + list.join(", ") +
    ")";
}

export default hookFunction("secret-redactor", (event) => {
  const counts = {};
  const redacted = redactValue(event.tool_output, counts);
  if (Object.keys(counts).length === 0) return null;
  return respond({ decision: "allow", modified_output: redacted, reason: summary(counts) });
});
