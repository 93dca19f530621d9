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
    kind: "new_instructions",
    re:
      /(?:^|\n)\s*(?:#+\s*|\[\s*)?(?:new|updated|important|urgent)\s+(?:system\s+)?instructions?\s*[:\]]/i,
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

/** Whether `detector` finds its kind of injection in `text`. */
function finds(detector, text) {
  return detector.test ? detector.test(text) : detector.re.test(text);
}

/** The kinds of injection found in `text`, in detector order. */
function findInjections(text) {
  return DETECTORS.filter((detector) => finds(detector, text)).map((detector) => detector.kind);
}

module.exports = { findInjections, DETECTORS };
