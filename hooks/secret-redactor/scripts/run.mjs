/**
 * secret-redactor (post-tool-call): replaces secrets and PII in
 * `tool_output` by `[REDACTED:kind]` markers. A string output stays a string;
 * an object or array keeps its shape (every string inside is scanned, and
 * string values under secret-looking keys such as `password` or `api_key`
 * are redacted whole). Nothing found: exit 0, no output.
 */
import { hookFunction, respond } from "hookbox:lib/hook_io.js";
import { joinStrings, mapStrings } from "hookbox:lib/json_walk.js";
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

/**
 * Whether a structured output may hold something to redact: its strings
 * are scanned as one text first, joined by newlines. What a detector finds
 * in one string it finds in that text, or a longer match over it (only a
 * private key's block goes on past a newline), so when the text holds
 * none and no string is under a secret-looking key, no string does;
 * scanning each of 150,000 short strings alone ran the hook out of fuel on
 * 600 KB.
 */
function mayHoldSecrets(output) {
  if (typeof output === "string") return true;
  const { text, keyed } = joinStrings(output, isSecretKey);
  if (keyed) return true;
  const counts = {};
  redactText(text, counts);
  return Object.keys(counts).length > 0;
}

export default hookFunction("secret-redactor", (event) => {
  if (!mayHoldSecrets(event.tool_output)) return null;
  const counts = {};
  const redacted = redactValue(event.tool_output, counts);
  if (Object.keys(counts).length === 0) return null;
  return respond({ decision: "allow", modified_output: redacted, reason: summary(counts) });
});
