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

/** A URL's password (each match), and a JWT: the detectors' regexes, kept for their scans too. */
const URL_PASSWORDS = /\b([a-z][a-z0-9+.-]{1,20}:\/\/[^\s:@/]{1,100}:)([^\s@/]{1,200})@/gi;
const JWTS = /\beyJ[A-Za-z0-9_-]{2,8192}\.eyJ[A-Za-z0-9_-]{2,16384}\.[A-Za-z0-9_-]{0,8192}/g;

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
    // What /\b([a-z][a-z0-9+.-]{1,20}:\/\/[^\s:@/]{1,100}:)([^\s@/]{1,200})@/gi matches, found
    // by trying it once for each `://` (`replaceUrlCredentials`): tried from every letter after a
    // dash or a dot, that regex scanned 20 characters from each, about 6 billion fuel a megabyte.
    kind: "url_credentials",
    any: ["://"],
    re: URL_PASSWORDS,
    // A `://` every 16 characters or more often: the regex costs less than a look at each.
    replaceIn: (text, replace, re) =>
      occursAtMost(text, "://", text.length >> 4)
        ? replaceUrlCredentials(text, replace)
        : text.replace(re, replace),
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
    re: JWTS,
    // Only a start with a long run of JWT characters after it is costly to try again and
    // again: without one, the regex is cheaper.
    replaceIn: (text, replace, re) =>
      /\beyJ[A-Za-z0-9_-]{61}/.test(text) ? replaceJwts(text, replace) : text.replace(re, replace),
    redact: whole("jwt"),
  },
  {
    kind: "bearer_token",
    any: ["Bearer"],
    re: /\b(Bearer[ \t]+)[A-Za-z0-9._~+/-]{16,4096}=*/g,
    redact: (_match, prefix) => prefix + marker("bearer_token"),
  },
  {
    // What /(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]*?(?:KEYWORD)[A-Za-z0-9_.-]{0,40}["']?)(SEPARATOR)
    // (?!\[REDACTED)(VALUE)/gi matches (the parts below), found in linear time
    // (`replaceAssignments`): that regex, from the start of a run of name characters, tried
    // its keywords at every character of the run, and a megabyte of one run (`1-1-…`, a
    // minified line) cost the redactor about 5 billion of its 10 billion fuel.
    kind: "password",
    anyLower: ["passw", "secret", "key", "token"],
    re:
      /(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]*?(?:passw(?:or)?d|secret|api[_-]?key|access[_-]?key|(?:access|auth|refresh|bearer)[_-]?token|private[_-]?key|\btoken)[A-Za-z0-9_.-]{0,40}["']?)([ \t]*[:=][ \t]*)(?!\[REDACTED)("[^"\n]{0,500}"|'[^'\n]{0,500}'|[^\s"',;&}]{1,500})/gi,
    // The regex tries its keywords at every character of every run of name characters; the
    // scan looks only at the runs that hold a keyword's stem, but at a cost for each: with
    // such a run every 128 characters or more often, the regex costs less.
    replaceIn: (text, replace, re) =>
      keyedRunsAtMost(text, text.length >> 7)
        ? replaceAssignments(text, replace)
        : text.replace(re, replace),
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

/** True when `needle` occurs in `text` at most `most` times. */
function occursAtMost(text, needle, most) {
  let count = 0;
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) {
    if (++count > most) return false;
  }
  return true;
}

/** A JWT, as the regex above (sticky: tried at one start). */
const JWT = new RegExp(JWTS.source, "y");
/** The last character before the run of JWT characters that ends a text. */
const BEFORE_JWT_RUN = /[^A-Za-z0-9_-](?=[A-Za-z0-9_-]*$)/;
/** An `eyJ` at a word boundary. */
const JWT_START = /(?<![A-Za-z0-9_])eyJ/g;

/**
 * `text` with each JWT what `replace(match)` gives, the matches those of the
 * regex above, leftmost first, without overlaps. Every match has a `.eyJ`
 * after its first part, and its first part runs to that dot: so each `.eyJ`
 * is looked at once, the regex tried only from the first `eyJ` at a word
 * boundary in the run before it that is within the regex's bound (if the
 * parts after the dot do not fit, no start in that run fits). Every search
 * is the engine's own (a loop over characters in JS costs the engine about
 * a hundred times a regex's step), and each part of the text is searched a
 * bounded number of times.
 */
function replaceJwts(text, replace) {
  // Pieces joined once at the end: appending to one string copies it each time in the engine.
  const out = [];
  let last = 0;
  let seen = 0; // the text before it was looked at for a run already
  for (let dot = text.indexOf(".eyJ"); dot >= 0; dot = text.indexOf(".eyJ", dot + 1)) {
    if (dot < last) continue;
    const from = Math.max(last, seen, dot - 8195);
    seen = dot + 1;
    const before = text.slice(from, dot).search(BEFORE_JWT_RUN);
    JWT_START.lastIndex = before < 0 ? from : from + before + 1;
    const start = JWT_START.exec(text)?.index ?? dot;
    if (start > dot - 5) continue;
    JWT.lastIndex = start;
    const found = JWT.exec(text);
    if (found === null) continue;
    out.push(text.slice(last, start), replace(found[0]));
    last = JWT.lastIndex;
  }
  if (last === 0) return text;
  out.push(text.slice(last));
  return out.join("");
}

/** A URL's password, as the regex above (sticky: tried at one start). */
const URL_PASSWORD = new RegExp(URL_PASSWORDS.source, "iy");
/** A letter at a word boundary whose run of scheme characters goes on to the end of the text. */
const SCHEME_START = /(?<![A-Za-z0-9_])[a-z](?=[a-z0-9+.-]*$)/i;

/**
 * `text` with each URL password what `replace(match, prefix, password)`
 * gives, the matches those of the regex above, leftmost first, without
 * overlaps. A match's scheme runs to a `://`: so each `://` is looked at
 * once, the regex tried only from the first letter at a word boundary in
 * the run of scheme characters before it, within 21 characters (the user
 * and password after it decide for every start in that run alike).
 */
function replaceUrlCredentials(text, replace) {
  const out = [];
  let last = 0;
  let seen = 0;
  for (let at = text.indexOf("://"); at >= 0; at = text.indexOf("://", at + 1)) {
    if (at < last) continue;
    const from = Math.max(last, seen, at - 21);
    seen = at + 3;
    // The letter's `\b` looks at the character before the part searched: a word character
    // there stands as `_`, which no start can be.
    const context = from > 0 && /\w/.test(text[from - 1]) ? "_" : " ";
    const letter = (context + text.slice(from, at)).search(SCHEME_START);
    if (letter < 1 || from + letter - 1 > at - 2) continue;
    URL_PASSWORD.lastIndex = from + letter - 1;
    const found = URL_PASSWORD.exec(text);
    if (found === null) continue;
    out.push(text.slice(last, found.index), replace(found[0], found[1], found[2]));
    last = URL_PASSWORD.lastIndex;
  }
  if (last === 0) return text;
  out.push(text.slice(last));
  return out.join("");
}

/** Where a key may hold one of the keywords: every keyword holds one of these. */
const KEY_STEMS = /passw|secret|key|token/gi;
/** A run of name characters (`[A-Za-z0-9_.-]`), from where it is tried. */
const NAME_RUN = /[A-Za-z0-9_.-]*/y;
/** The last character before the run of name characters that ends a text. */
const BEFORE_NAME_RUN = /[^A-Za-z0-9_.-](?=[A-Za-z0-9_.-]*$)/;
/**
 * A keyword of a key that holds a secret, with at most 40 name characters
 * after it to the end of the text (the keywords are at most 13 characters).
 */
const KEYWORD_AT_END =
  /(?:passw(?:or)?d|secret|api[_-]?key|access[_-]?key|(?:access|auth|refresh|bearer)[_-]?token|private[_-]?key|\btoken)[A-Za-z0-9_.-]{0,40}$/i;
/** What follows a key: its separator and the value. */
const ASSIGNED =
  /(["']?)([ \t]*[:=][ \t]*)(?!\[REDACTED)("[^"\n]{0,500}"|'[^'\n]{0,500}'|[^\s"',;&}]{1,500})/y;

/** True when at most `most` runs of name characters in `text` hold a keyword's stem. */
function keyedRunsAtMost(text, most) {
  let count = 0;
  KEY_STEMS.lastIndex = 0;
  while (KEY_STEMS.exec(text) !== null) {
    if (++count > most) return false;
    NAME_RUN.lastIndex = KEY_STEMS.lastIndex;
    NAME_RUN.test(text);
    KEY_STEMS.lastIndex = NAME_RUN.lastIndex;
  }
  return true;
}

/**
 * `text` with each assignment to a secret-looking key what
 * `replace(match, key, separator, value)` gives, the matches those of the
 * regex above, leftmost first, without overlaps. A match's key is a whole
 * run of name characters (it starts where one starts, and what follows it,
 * a quote, a blank, `:` or `=`, is none) with a keyword ending at most 40
 * characters before the run ends; which keyword does not change the match.
 * So each run holding a keyword's stem is looked at once: its last 53
 * characters for a keyword, then what follows it. Every search is the
 * engine's own, and each part of the text is searched a bounded number of
 * times.
 */
function replaceAssignments(text, replace) {
  const out = [];
  let last = 0;
  let seen = 0; // the end of the last run looked at
  KEY_STEMS.lastIndex = 0;
  for (let stem = KEY_STEMS.exec(text); stem !== null; stem = KEY_STEMS.exec(text)) {
    const from = Math.max(last, seen);
    const before = text.slice(from, stem.index).search(BEFORE_NAME_RUN);
    const start = before < 0 ? from : from + before + 1;
    NAME_RUN.lastIndex = stem.index;
    NAME_RUN.test(text);
    const end = NAME_RUN.lastIndex;
    KEY_STEMS.lastIndex = seen = end;
    // A run that began before the last match cannot start one.
    if (before < 0 && start === last && start > 0 && /[A-Za-z0-9_.-]/.test(text[start - 1])) {
      continue;
    }
    // The keyword's `\b` looks at the character before the part searched.
    const tail = Math.max(start, end - 53);
    const context = tail > start ? text[tail - 1] : " ";
    if (!KEYWORD_AT_END.test(context + text.slice(tail, end))) continue;
    ASSIGNED.lastIndex = end;
    const assigned = ASSIGNED.exec(text);
    if (assigned === null) continue;
    out.push(
      text.slice(last, start),
      replace(
        text.slice(start, ASSIGNED.lastIndex),
        text.slice(start, end) + assigned[1],
        assigned[2],
        assigned[3],
      ),
    );
    last = ASSIGNED.lastIndex;
    KEY_STEMS.lastIndex = last;
  }
  if (last === 0) return text;
  out.push(text.slice(last));
  return out.join("");
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
      ? detector.replaceIn(out, redacted, detector.re)
      : out.replace(detector.re, redacted);
  }
  return out;
}

/** Key names whose string values are secrets whatever they look like. */
function isSecretKey(key) {
  return typeof key === "string" && SECRET_KEY.test(key);
}

module.exports = {
  redactText,
  isSecretKey,
  isPlaceholder,
  marker,
  DETECTORS,
  replaceJwts,
  replaceUrlCredentials,
  replaceAssignments,
};
