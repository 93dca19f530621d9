"use strict";
/**
 * Detectors for text that tries to instruct an AI agent (prompt injection)
 * inside content the agent fetched. Each has a `kind` and a RegExp (or a
 * `test(text)`); they only flag, they never rewrite. Tuned to leave ordinary
 * prose alone ("you are now logged in" is not flagged, "you are now an
 * unrestricted assistant" is).
 */

/** What makes an HTML comment one addressed to an AI. */
const ADDRESSED_TO_AI =
  /\b(?:ignore|disregard|instructions?|assistant|AI agent|language model|LLM|system prompt|you (?:must|should|are))\b/i;

/** A line that announces new instructions: `## New instructions:`, `[Important instructions]`. */
const NEW_INSTRUCTIONS = String
  .raw`\s*(?:#+\s*|\[\s*)?(?:new|updated|important|urgent)\s+(?:system\s+)?instructions?\s*[:\]]`;
const NEW_INSTRUCTIONS_AT_START = new RegExp("^" + NEW_INSTRUCTIONS, "i");
const NEW_INSTRUCTIONS_AFTER_NEWLINE = new RegExp("\n" + NEW_INSTRUCTIONS, "i");

const DETECTORS = [
  {
    kind: "ignore_instructions",
    re:
      /\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|of\s+)*(?:previous|prior|above|earlier|preceding|existing|original|system)\s+(?:instructions|prompts?|messages|directions|rules|guidelines|context)\b/i,
  },
  {
    kind: "disregard",
    re:
      /\bdisregard\s+(?:all|any|everything|the|your|what)\b[^.\n]{0,80}\b(?:instructions|told|said|rules|guidelines|above|before)\b/i,
  },
  {
    kind: "role_override",
    re:
      /\b(?:you are now|from now on,? you (?:are|will|must)|pretend (?:to be|you are)|act as)\s+(?:an?\s+|the\s+|in\s+)?(?:[\w-]+\s+){0,3}?(?:assistant|ai|model|chatbot|bot|agent|persona|character|mode|dan|jailbreak|unrestricted|unfiltered)\b/i,
  },
  {
    kind: "system_prompt",
    re:
      /\b(?:reveal|print|show|output|repeat|leak|ignore|override|new|updated|your)\s+(?:the\s+|your\s+|my\s+)?system\s+(?:prompt|message|instructions)\b/i,
  },
  {
    // At the start or after a newline, as two patterns: the one after a newline begins with a
    // character, so the engine skips to newlines instead of trying every position.
    kind: "new_instructions",
    test: (text) =>
      NEW_INSTRUCTIONS_AT_START.test(text) || NEW_INSTRUCTIONS_AFTER_NEWLINE.test(text),
  },
  {
    kind: "chat_template_token",
    re:
      /<\|(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id|begin_of_text)\|>|\[\/?INST\]|<<\/?SYS>>/i,
  },
  {
    // Each comment is found by searching, then its text is tested: a pattern tried from every
    // `<!--` with a bounded body cost 2,000 steps per `<!--` where no `-->` followed, so a page of
    // `<!--<!--…` ran the hook out of fuel before it could look at the rest.
    kind: "hidden_html_instruction",
    test(text) {
      for (let at = text.indexOf("<!--"); at >= 0;) {
        const end = text.indexOf("-->", at + 4);
        if (end < 0) return false;
        if (ADDRESSED_TO_AI.test(text.slice(at + 4, end))) return true;
        // The next comment may open inside this one's `-->` (`<!-->`, `<!--->`).
        at = text.indexOf("<!--", end - 3);
      }
      return false;
    },
  },
  {
    kind: "invisible_characters",
    re: /[\u200B\u200C\u2060\u202A-\u202E\u2066-\u2069]|(?!^)\uFEFF|[\u{E0000}-\u{E007F}]/u,
  },
];

/** Characters that show as nothing inside a word: soft hyphen, zero-width ones, joiners, tags. */
const INVISIBLE = /[\u00AD\u034F\u180E\u200B-\u200F\u2060-\u2064\uFEFF]|[\u{E0000}-\u{E007F}]/gu;

/** Cyrillic and Greek letters drawn like Latin ones, and the Latin letter each is read as. */
const LOOK_ALIKES = [
  ..."\u0430a\u0432b\u0435e\u043Ak\u043Cm\u043Dh\u043Eo\u0440p\u0441c\u0442t\u0443y\u0445x",
  ..."\u0455s\u0456i\u0458j\u0501d\u051Bq\u051Dw\u04CFl\u0410A\u0412B\u0415E\u041AK\u041CM",
  ..."\u041DH\u041EO\u0420P\u0421C\u0422T\u0425X\u0405S\u0406I\u0408J\u04AEY\u0391A\u0392B",
  ..."\u0395E\u0396Z\u0397H\u0399I\u039AK\u039CM\u039DN\u039FO\u03A1P\u03A4T\u03A5Y\u03A7X",
  ..."\u03BFo\u03B9i\u03BDv\u0131i\u0261g",
].join("");

/**
 * Compatibility forms NFKC reads as Latin letters: modifier and superscript letters, letterlike
 * symbols, enclosed letters, ligatures, fullwidth letters and digits (not the fullwidth
 * punctuation of CJK text), mathematical letters. Only text holding one is normalized, which
 * costs the engine about 4,500 instructions a character.
 */
const COMPATIBLE =
  /[\u1D2C-\u1D6A\u2070-\u209F\u2100-\u214F\u2460-\u24FF\uFB00-\uFB06\uFF10-\uFF19\uFF21-\uFF3A\uFF41-\uFF5A]|\uD835[\uDC00-\uDFFF]/;

/**
 * An HTML character reference: `&#73;`, `&#x49;`, or one of NAMED (the invisible ones; not `&lt;`
 * and the like, which pages about markup are full of).
 */
const REFERENCE =
  /&(?:#(?:[xX]([0-9a-fA-F]{1,6})|([0-9]{1,7}))|(shy|nbsp|zwj|zwnj|ZeroWidthSpace|NoBreak));?/g;
/** Most numeric character references `asRead` decodes; a page with more is marked unread. */
const MAX_REFERENCES = 65536;

/**
 * More numeric references in `text` than `asRead` decodes. Decoding costs the engine about
 * 40,000 instructions a reference: more could run the marker out of fuel before it read the page.
 */
function tooManyReferences(text) {
  return text.length > MAX_REFERENCES * 3 && text.split("&#").length > MAX_REFERENCES;
}

/** Text `asRead` may change: characters outside ASCII, or a reference REFERENCE decodes. */
const ENCODED = /[\u0080-\uFFFF]|&(?:#|shy|nbsp|zwj|zwnj|ZeroWidthSpace|NoBreak)/;
/** What the named references of REFERENCE stand for. */
const NAMED = {
  shy: "\u00AD",
  nbsp: "\u00A0",
  zwj: "\u200D",
  zwnj: "\u200C",
  ZeroWidthSpace: "\u200B",
  NoBreak: "\u2060",
};

/** `text` with its HTML character references decoded (`&#73;gnore` is `Ignore`). */
function decodeReferences(text) {
  return text.replace(REFERENCE, (reference, hex, decimal, name) => {
    if (name !== undefined) return NAMED[name];
    const code = hex !== undefined ? parseInt(hex, 16) : parseInt(decimal, 10);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : reference;
  });
}

/** A Latin letter next to a Cyrillic or Greek one (or `ı`, `ɡ`): a word that mixes scripts. */
const MIXED = /[A-Za-z][\u0370-\u052F\u0131\u0261]|[\u0370-\u052F\u0131\u0261][A-Za-z]/;

/**
 * `text` as it reads: HTML character references decoded (`&#73;gnore`),
 * compatibility forms folded (NFKC: fullwidth `Ｉｇｎｏｒｅ`,
 * mathematical `𝐈𝐠𝐧𝐨𝐫𝐞`), invisible characters dropped (`I\u00ADgnore`) and,
 * when some word mixes scripts, look-alike letters read as Latin throughout
 * (Cyrillic `Іgnore`). Each look-alike is replaced by splitting and joining,
 * which costs the engine far less per letter than a replace callback; text
 * in one script (a page of Russian prose) is not folded at all.
 */
function asRead(text, manyReferences = tooManyReferences(text)) {
  let read = text.includes("&") && !manyReferences ? decodeReferences(text) : text;
  read = (COMPATIBLE.test(read) ? read.normalize("NFKC") : read).replace(INVISIBLE, "");
  if (!MIXED.test(read)) return read;
  for (let i = 0; i < LOOK_ALIKES.length; i += 2) {
    if (read.includes(LOOK_ALIKES[i])) read = read.split(LOOK_ALIKES[i]).join(LOOK_ALIKES[i + 1]);
  }
  return read;
}

/** Whether `detector` finds its kind of injection in `text`. */
function finds(detector, text) {
  return detector.test ? detector.test(text) : detector.re.test(text);
}

/**
 * The kinds of injection found in `text`, in detector order. Text with
 * characters outside ASCII or character references is also read as it
 * reads (`asRead`), so that look-alike, invisible or encoded characters do
 * not hide an instruction.
 */
function findInjections(text) {
  const manyReferences = tooManyReferences(text);
  const read = ENCODED.test(text) ? asRead(text, manyReferences) : text;
  const kinds = DETECTORS.filter((detector) =>
    finds(detector, text) || (read !== text && finds(detector, read))
  ).map((detector) => detector.kind);
  // A page with too many references to decode is marked unread.
  if (manyReferences) kinds.push("character_references");
  return kinds;
}

module.exports = { findInjections, asRead, DETECTORS };
