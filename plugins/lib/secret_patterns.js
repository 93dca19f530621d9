"use strict";
/**
 * Secret and PII detectors for redaction. Each detector has a `kind` (used
 * in `[REDACTED:kind]` markers), a global RegExp and a `redact(match, ...groups)`
 * that returns the replacement text, or null to keep it (it is called once per
 * match, with positional arguments: no array or destructuring, which cost the
 * engine more than the match itself);
 * `any` (or `anyLower`, matched against the text in lower case) lists texts
 * one of which every match contains, so a detector none of them is in skips.
 * Every quantifier is bounded, or starts only where a name starts, so that
 * long inputs stay linear. Detectors run in order; text already replaced by
 * a marker is never matched again.
 */

const marker = (kind) => "[REDACTED:" + kind + "]";
const whole = (kind) => {
  const text = marker(kind);
  return () => text;
};

/** Luhn checksum of a digit string. */
function luhn(digits) {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

/** Issuer prefix and length of the major card networks, plus Luhn. */
function isCardNumber(digits) {
  const n = digits.length;
  const issuer = (/^4/.test(digits) && (n === 13 || n === 16 || n === 19)) ||
    (/^(5[1-5]|2(2[2-9]|[3-6]\d|7[01]|720))/.test(digits) && n === 16) ||
    (/^3[47]/.test(digits) && n === 15) ||
    (/^3(0[0-5]|[689])/.test(digits) && n === 14) ||
    (/^(6011|65|64[4-9]|62|35(2[89]|[3-8]\d))/.test(digits) && n >= 16);
  return issuer && luhn(digits);
}

/** Values that are not secrets: empty, literals, `$VAR` references, masks. */
function isPlaceholder(value) {
  return /^(|null|none|true|false|undefined|\*+|\$.*|<[^>]*>)$/i.test(value);
}

const PASSWORD_KEY = /passw(?:or)?d/i;
const SECRET_KEY = new RegExp(
  "passw(?:or)?d|secret|api[_-]?key|access[_-]?key|(?:access|auth|refresh|bearer)[_-]?token|" +
    "private[_-]?key|^token$",
  "i",
);

/** `password = "x"`, `api_key: x`, `"client_secret": "x"`, `TOKEN=x` ... */
function assignment(_match, key, separator, value) {
  const bare = value.replace(/^(["'])([\s\S]*)\1$/, "$2");
  const kind = PASSWORD_KEY.test(key) ? "password" : "credential";
  if (isPlaceholder(bare) || (kind === "credential" && (bare.length < 8 || /^\d+$/.test(bare)))) {
    return null;
  }
  const quote = bare === value ? "" : value[0];
  return key + separator + quote + marker(kind) + quote;
}

/** Endings that make `name@2x.png` a file name, not an address. */
const FILE_ENDINGS = new Set(
  "png jpg jpeg gif svg webp ico js mjs ts css json md txt htm html pdf zip gz".split(" "),
);

/** `git@host` or a file name such as `icon@2x.png`: not an address to redact. */
function notAnAddress(address) {
  return address.slice(0, 4).toLowerCase() === "git@" ||
    FILE_ENDINGS.has(address.slice(address.lastIndexOf(".") + 1).toLowerCase());
}

const EMAIL = marker("email");
const CARD = marker("credit_card");

const DETECTORS = [
  {
    kind: "private_key",
    any: ["PRIVATE KEY-----"],
    re:
      /-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----(?:[\s\S]*?-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----|[\s\S]*$)/g,
    redact: whole("private_key"),
  },
  {
    kind: "url_credentials",
    any: ["://"],
    re: /\b([a-z][a-z0-9+.-]{1,20}:\/\/[^\s:@/]{1,100}:)([^\s@/]{1,200})@/gi,
    redact: (_match, prefix, pass) =>
      isPlaceholder(pass) ? null : prefix + marker("url_credentials") + "@",
  },
  {
    kind: "aws_access_key",
    re: /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b/g,
    redact: whole("aws_access_key"),
  },
  {
    kind: "github_token",
    any: ["gh", "github_pat_"],
    re: /\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b/g,
    redact: whole("github_token"),
  },
  {
    kind: "slack_token",
    any: ["xox"],
    re: /\bxox[abposr]-[A-Za-z0-9-]{10,250}/g,
    redact: whole("slack_token"),
  },
  {
    kind: "slack_webhook",
    any: ["hooks.slack.com"],
    re: /https:\/\/hooks\.slack\.com\/services\/[A-Za-z0-9_/]{20,200}/g,
    redact: whole("slack_webhook"),
  },
  {
    // What /\beyJ[A-Za-z0-9_-]{2,8192}\.eyJ[A-Za-z0-9_-]{2,16384}\.[A-Za-z0-9_-]{0,8192}/g
    // matches, found in linear time (`replaceJwts`): that regex, tried from every `eyJ` after
    // a dash, scanned the rest of the run each time, and 100 KB of `eyJ-` ran the redactor out
    // of its 10 billion fuel (its output blocked).
    kind: "jwt",
    any: [".eyJ"],
    replaceIn: (text, replace) => replaceJwts(text, replace),
    redact: whole("jwt"),
  },
  {
    kind: "bearer_token",
    any: ["Bearer"],
    re: /\b(Bearer[ \t]+)[A-Za-z0-9._~+/-]{16,4096}=*/g,
    redact: (_match, prefix) => prefix + marker("bearer_token"),
  },
  {
    // The key starts where a name starts (the look-behind): with a key prefix of up to 40 name
    // characters tried from every position, a long run of them (a base64 blob, a minified line)
    // cost 40 steps a character, and 100 KB of it ran the redactor out of its 10 billion fuel.
    kind: "password",
    anyLower: ["passw", "secret", "key", "token"],
    re:
      /(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]*?(?:passw(?:or)?d|secret|api[_-]?key|access[_-]?key|(?:access|auth|refresh|bearer)[_-]?token|private[_-]?key|\btoken)[A-Za-z0-9_.-]{0,40}["']?)([ \t]*[:=][ \t]*)(?!\[REDACTED)("[^"\n]{0,500}"|'[^'\n]{0,500}'|[^\s"',;&}]{1,500})/gi,
    redact: assignment,
  },
  {
    // The address starts where a run of address characters starts (the look-behind; the
    // punctuation that leads it is kept): tried from every word boundary with a bounded local
    // part, a dotted or dashed run (`a.b.c…`, `1-2-3…`) cost 64 steps a character.
    kind: "email",
    any: ["@"],
    re:
      /(?<![A-Za-z0-9._%+-])([.%+-]*)\b[A-Za-z0-9._%+-]+@(?:[A-Za-z0-9-]{1,63}\.){1,8}[A-Za-z]{2,24}\b/g,
    redact: (match, lead) => (notAnAddress(match.slice(lead.length)) ? null : lead + EMAIL),
  },
  {
    kind: "credit_card",
    re: /\b(?:\d[ -]?){12,18}\d\b/g,
    redact: (match) => (isCardNumber(match.replace(/[ -]/g, "")) ? CARD : null),
  },
  {
    kind: "ssn",
    any: ["-"],
    re: /\b(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}\b/g,
    redact: whole("ssn"),
  },
];

/** A character of a JWT's parts: `[A-Za-z0-9_-]`. */
function isJwtChar(c) {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 ||
    c === 45;
}

/**
 * `text` with each JWT `replace(match)` gives (null: kept), the JWTs those of
 * the regex above, leftmost first, without overlaps. Every match has a `.eyJ`
 * after its first part, and its first part runs to that dot: so each `.eyJ`
 * is looked at once, with the run of JWT characters before it (the first
 * `eyJ` there at a word boundary, 2 to 8,192 characters before the dot,
 * starts the match; if the parts after the dot do not fit, no start in that
 * run fits) and the two parts after it. Every character is read a bounded
 * number of times.
 */
function replaceJwts(text, replace) {
  let out = "";
  let last = 0;
  for (let dot = text.indexOf(".eyJ"); dot >= 0; dot = text.indexOf(".eyJ", dot + 1)) {
    if (dot < last) continue;
    let from = dot;
    const lowest = Math.max(last, dot - 8195);
    while (from > lowest && isJwtChar(text.charCodeAt(from - 1))) from--;
    let start = -1;
    for (let at = text.indexOf("eyJ", from); at >= 0 && at <= dot - 5;) {
      const before = at === 0 ? 0 : text.charCodeAt(at - 1);
      if (at === 0 || before === 45 || !isJwtChar(before)) {
        start = at;
        break;
      }
      at = text.indexOf("eyJ", at + 1);
    }
    if (start < 0) continue;
    // The second part: `eyJ` and 2 to 16,384 more characters, up to a dot.
    let end = dot + 4;
    while (end - dot <= 16389 && isJwtChar(text.charCodeAt(end))) end++;
    if (text.charCodeAt(end) !== 46 || end - dot < 6 || end - dot > 16388) continue;
    // The signature: up to 8,192 characters.
    let stop = end + 1;
    while (stop - end <= 8192 && isJwtChar(text.charCodeAt(stop))) stop++;
    const match = text.slice(start, stop);
    const replacement = replace(match);
    if (replacement === null) continue;
    out += text.slice(last, start) + replacement;
    last = stop;
  }
  return last === 0 ? text : out + text.slice(last);
}

/** The kind a replacement text stands for (`[REDACTED:email]` -> `email`). */
function kindOf(replacement) {
  const at = replacement.indexOf("[REDACTED:");
  const end = at < 0 ? -1 : replacement.indexOf("]", at);
  return end < 0 ? "secret" : replacement.slice(at + 10, end);
}

/**
 * Replaces every secret in `text` by a `[REDACTED:kind]` marker and adds
 * one to `counts[kind]` per replacement. Returns the new text.
 */
function redactText(text, counts) {
  let out = text;
  for (const detector of DETECTORS) {
    // A detector whose match needs a text the output does not hold is not run: scanning costs
    // the regex engine's steps at every position, the search for a text far fewer.
    if (detector.any && !detector.any.some((t) => out.includes(t))) continue;
    if (detector.anyLower) {
      const lower = out.toLowerCase();
      if (!detector.anyLower.some((t) => lower.includes(t))) continue;
    }
    // Past its groups, a detector's redact gets the offset and the text, which it ignores.
    const redacted = (match, g1, g2, g3) => {
      const replacement = detector.redact(match, g1, g2, g3);
      if (replacement === null) return match;
      const kind = kindOf(replacement);
      counts[kind] = (counts[kind] || 0) + 1;
      return replacement;
    };
    out = detector.replaceIn
      ? detector.replaceIn(out, redacted)
      : out.replace(detector.re, redacted);
  }
  return out;
}

/** Key names whose string values are secrets whatever they look like. */
function isSecretKey(key) {
  return typeof key === "string" && SECRET_KEY.test(key);
}

module.exports = { redactText, isSecretKey, isPlaceholder, marker, DETECTORS };
