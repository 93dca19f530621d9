/**
 * stop-gate (pre-agent-turn-stop): a quality gate. It blocks the stop (so the
 * agent continues with the reason as feedback) when `last_message` is empty,
 * or when it claims the work is done while admitting a problem: failing
 * tests, TODO/FIXME, "not implemented", "I was unable to". A message that
 * only reports a problem, without claiming completion, is an honest stop and
 * passes. After MAX_ATTEMPTS stops (`stop_count`) the gate gives up.
 */
import { block, hookFunction, invalid, respond, stringField } from "hookbox:lib/hook_io.js";

const MAX_ATTEMPTS = 3;

/**
 * Words just before a problem phrase that say it is gone ("fixed the failing tests", "no TODO
 * left"): one of them, then at most two more words. Written as a look-behind, so that a phrase
 * they mark is skipped inside the regex engine, and hostile text dense with such phrases costs
 * no more than prose.
 */
const RESOLVED = String
  .raw`\b(?:(?:fix|resolv|repair|address|remov)ed|fix(?:es|ing)?|resolv(?:es|ing)|repair|address|previously|formerly|used to|no(?: longer| more)?|zero)[ \t]+(?:[\w'-]+[ \t]+){0,2}?`;

/**
 * `pattern` (a regex source) where RESOLVED does not come just before it. The look-ahead first
 * makes the engine look behind only where the pattern matches.
 */
function unresolved(pattern, flags) {
  return new RegExp(String.raw`(?=${pattern})(?<!${RESOLVED})(?:${pattern})`, flags);
}

/** The words before "implemented" and before "complete" in the problem phrases that hold them. */
const NOT_YET = String.raw`not\s+(?:yet\s+)?`;
const I_COULD_NOT = String
  .raw`I\s+(?:could\s*n[o']t|can\s*n[o']t|couldn't|did\s*n[o']t\s+manage\s+to)\s+`;

const PROBLEMS = [
  {
    kind: "failing tests",
    re: unresolved(
      String
        .raw`\b(?:(?:tests?|specs?|checks?|builds?|CI)\s+(?:are\s+|is\s+|still\s+){0,8}(?:failing|failed|fails|broken|red)\b|failing\s+(?:tests?|specs?|checks?)|[1-9]\d*\s+(?:tests?\s+)?failed\b)`,
      "i",
    ),
    fix: "make the failing tests pass, then stop",
  },
  {
    kind: "TODO/FIXME",
    re: unresolved(String.raw`\b(?:TODO|FIXME|XXX)\b`, ""),
    fix: "resolve the TODO/FIXME items or remove them",
  },
  {
    kind: "missing implementation",
    re: unresolved(
      String
        .raw`\b(?:${NOT_YET}implemented|unimplemented|left\s+as\s+an\s+exercise|placeholder\s+implementation|stubbed\s+out)\b`,
      "i",
    ),
    fix: "implement what is still missing",
  },
  {
    kind: "something you could not do",
    re: unresolved(
      String
        .raw`\bI\s+(?:was|am|'m)\s+(?:unable|not\s+able)\s+to\b|\b${I_COULD_NOT}(?:get|make|fix|finish|complete|resolve|figure)\b`,
      "i",
    ),
    fix: "try again at what you could not do, or say exactly what stops you",
  },
];

/**
 * Claims of completion outside the problem phrases. Two claim words are also part of one:
 * "implemented" ("not implemented") and "complete" ("I couldn't complete"). There they claim
 * nothing, unless the phrase itself is marked as resolved ("previously not implemented").
 */
const CLAIMS = [
  /\b(?:done|complete[ds]|finished|all set|ready|fixed|resolved|works|working|succeeded|successfully|should now|is now|are now)\b|\u2705/i,
  claimOutside("implemented", NOT_YET),
  claimOutside("complete", I_COULD_NOT),
];

/** Claim word `word` where it does not end a problem phrase that starts with `before`. */
function claimOutside(word, before) {
  const phrase = String.raw`\b${before}${word}`;
  return new RegExp(String.raw`\b${word}\b(?:(?<!${phrase})|(?<=${RESOLVED}${phrase}))`, "i");
}

/** The longest quote of a phrase the reason carries: the phrase is the message's text. */
const QUOTE_MAX = 60;

/** `phrase` on one line and cut to QUOTE_MAX characters, so that the reason fits `output_kb`. */
function quote(phrase) {
  const line = phrase.replace(/\s+/g, " ");
  return line.length > QUOTE_MAX ? line.slice(0, QUOTE_MAX - 3) + "..." : line;
}

/** The first problem phrase of each kind in `text` not marked as resolved. */
function findProblems(text) {
  const found = [];
  for (const problem of PROBLEMS) {
    const match = problem.re.exec(text);
    if (match !== null) found.push({ problem, quote: quote(match[0]) });
  }
  return found;
}

/** Claims completion outside the problem phrases themselves ("not implemented"). */
function claimsDone(text) {
  return CLAIMS.some((claim) => claim.test(text));
}

function feedback(found, attempt) {
  const said = found.map((hit) => hit.problem.kind + ' ("' + hit.quote + '")');
  const todo = found.map((hit) => hit.problem.fix);
  return "stop-gate: your last message says the work is done but also mentions " + said.join(", ") +
    ". Before stopping: " + todo.join("; ") + ". (stop attempt " + attempt + " of " + MAX_ATTEMPTS +
    ")";
}

function stopCount(event) {
  const value = event.stop_count;
  if (value === undefined || value === null) return 0;
  if (typeof value !== "number" || !(value >= 0)) invalid("field stop_count must be a number >= 0");
  return value;
}

export default hookFunction("stop-gate", (event) => {
  const message = stringField(event, "last_message", "");
  const count = stopCount(event);
  let reason = null;
  if (message.trim() === "") {
    reason =
      "stop-gate: your last message is empty. Before stopping, say what you did, how you checked it, and what is left.";
  } else {
    const found = findProblems(message);
    if (found.length && claimsDone(message)) reason = feedback(found, count + 1);
  }
  if (reason === null) return null;
  if (count >= MAX_ATTEMPTS) {
    return respond({
      decision: "allow",
      reason: "stop gate gave up after " + MAX_ATTEMPTS + " attempts",
    });
  }
  return block(reason);
});
