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

/** Words just before a problem phrase that say it is gone ("fixed the failing tests"). */
const RESOLVED_BEFORE =
  /\b(?:fix(?:ed|es|ing)?|resolv(?:ed|es|ing)|repair(?:ed)?|address(?:ed)?|previously|formerly|used to|no longer|no more|no|zero|removed)[ \t]+(?:[\w'-]+[ \t]+){0,2}$/i;

const PROBLEMS = [
  {
    kind: "failing tests",
    re:
      /\b(?:(?:tests?|specs?|checks?|builds?|CI)\s+(?:are\s+|is\s+|still\s+)*(?:failing|failed|fails|broken|red)\b|failing\s+(?:tests?|specs?|checks?)|[1-9]\d*\s+(?:tests?\s+)?failed\b)/gi,
    fix: "make the failing tests pass, then stop",
  },
  {
    kind: "TODO/FIXME",
    re: /\b(?:TODO|FIXME|XXX)\b/g,
    fix: "resolve the TODO/FIXME items or remove them",
  },
  {
    kind: "missing implementation",
    re:
      /\b(?:not\s+(?:yet\s+)?implemented|unimplemented|left\s+as\s+an\s+exercise|placeholder\s+implementation|stubbed\s+out)\b/gi,
    fix: "implement what is still missing",
  },
  {
    kind: "something you could not do",
    re:
      /\bI\s+(?:was|am|'m)\s+(?:unable|not\s+able)\s+to\b|\bI\s+(?:could\s*n[o']t|can\s*n[o']t|couldn't|did\s*n[o']t\s+manage\s+to)\s+(?:get|make|fix|finish|complete|resolve|figure)\b/gi,
    fix: "try again at what you could not do, or say exactly what stops you",
  },
];

const CLAIM =
  /\b(?:done|complete[ds]?|finished|implemented|all set|ready|fixed|resolved|works|working|succeeded|successfully|should now|is now|are now)\b|\u2705/i;

/** Problem phrases in `text` that are not marked as resolved, with their spans. */
function findProblems(text) {
  const found = [];
  for (const problem of PROBLEMS) {
    for (const match of text.matchAll(problem.re)) {
      const before = text.slice(Math.max(0, match.index - 40), match.index);
      if (!RESOLVED_BEFORE.test(before)) {
        found.push({
          problem,
          quote: match[0],
          start: match.index,
          end: match.index + match[0].length,
        });
      }
    }
  }
  return found;
}

/** Claims completion outside the problem phrases themselves ("not implemented"). */
function claimsDone(text, found) {
  let rest = text;
  for (const hit of found) {
    rest = rest.slice(0, hit.start) + " ".repeat(hit.end - hit.start) + rest.slice(hit.end);
  }
  return CLAIM.test(rest);
}

function feedback(found, attempt) {
  const kinds = [];
  for (const hit of found) if (!kinds.includes(hit.problem)) kinds.push(hit.problem);
  const said = kinds.map((p) => p.kind + ' ("' + found.find((h) => h.problem === p).quote + '")');
  const todo = kinds.map((p) => p.fix);
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
    if (found.length && claimsDone(message, found)) reason = feedback(found, count + 1);
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
