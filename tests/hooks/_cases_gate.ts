/**
 * stop-gate cases.
 *
 * @module
 */
import type { HookCase } from "./_cases.ts";

const hook = "stop-gate";

function stopEvent(lastMessage: unknown, stopCount: unknown = 0): Record<string, unknown> {
  return {
    event_type: "pre-agent-turn-stop",
    timestamp: "2025-01-15T10:30:00Z",
    session_id: "sess-1",
    work_dir: "/home/user/project",
    last_message: lastMessage,
    stop_count: stopCount,
  };
}

function gated(name: string, message: unknown, stderrIncludes: string, stopCount = 0): HookCase {
  return { hook, name, event: stopEvent(message, stopCount), exitCode: 2, stderrIncludes };
}

function passes(name: string, message: unknown, stopCount = 0): HookCase {
  return { hook, name, event: stopEvent(message, stopCount), exitCode: 0 };
}

const GAVE_UP = { decision: "allow", reason: "stop gate gave up after 3 attempts" };

/** stop-gate: gated, passing and give-up cases. */
export const gateCases: HookCase[] = [
  gated("gates an empty message", "", "stop-gate: your last message is empty"),
  gated("gates a whitespace-only message", " \n\t", "your last message is empty"),
  gated("gates a missing message", undefined, "your last message is empty"),
  gated(
    "gates 'done' with failing tests",
    "Done! The feature is implemented. 2 tests are still failing.",
    'stop-gate: your last message says the work is done but also mentions failing tests ("tests are still failing"). Before stopping: make the failing tests pass, then stop. (stop attempt 1 of 3)',
  ),
  gated(
    "gates 'complete' with a test summary showing failures",
    "All complete. Result: 3 failed, 41 passed.",
    'failing tests ("3 failed")',
  ),
  gated(
    "gates 'finished' with a TODO",
    "Finished the refactor. TODO: handle errors",
    'TODO/FIXME ("TODO")',
    1,
  ),
  gated(
    "gates 'ready' with not implemented",
    "The API is ready; export is not implemented yet.",
    'missing implementation ("not implemented")',
  ),
  gated(
    "gates 'fixed' with I was unable",
    "Fixed the login bug. I was unable to run the e2e suite.",
    'something you could not do ("I was unable to")',
  ),
  gated("counts the attempt", "Done. TODO: docs", "(stop attempt 3 of 3)", 2),
  gated(
    "lists every problem",
    "Done, but FIXME in parser and tests are failing.",
    'failing tests ("tests are failing"), TODO/FIXME ("FIXME")',
  ),
  gated(
    "quotes a phrase on one line",
    "Done.\nThe tests\n\n   are failing.",
    'failing tests ("tests are failing")',
  ),
  gated(
    "counts a phrase marked as resolved as a claim",
    "Export was previously not implemented. TODO: docs",
    'TODO/FIXME ("TODO")',
  ),
  passes(
    "passes 'I couldn't complete' without another claim",
    "I couldn't complete the migration; TODO: run it again.",
  ),
  passes("passes a completed turn", "Implemented the parser and added tests; deno task ok passes."),
  passes("passes 'fixed the failing tests'", "I fixed the failing tests; everything is done."),
  passes("passes 'no TODO left'", "All done: there are no TODO items left."),
  passes(
    "passes an honest report without a completion claim",
    "I was unable to reach the network. Please send me the file.",
  ),
  passes(
    "passes a problem stated without a claim",
    "The parser is not implemented yet; shall I continue?",
  ),
  passes("passes a question", "Which database should I use?"),
  {
    hook,
    name: "gives up after 3 attempts",
    event: stopEvent("", 3),
    exitCode: 0,
    stdout: GAVE_UP,
  },
  {
    hook,
    name: "gives up when stop_count is above 3",
    event: stopEvent("Done. TODO: tests", 7),
    exitCode: 0,
    stdout: GAVE_UP,
  },
  passes("passes a good message silently after 3 attempts", "All done, tests pass.", 5),
  {
    hook,
    name: "treats a missing stop_count as 0",
    event: { event_type: "pre-agent-turn-stop", last_message: "Done. TODO: x" },
    exitCode: 2,
    stderrIncludes: "(stop attempt 1 of 3)",
  },
  {
    hook,
    name: "rejects a non-number stop_count",
    event: stopEvent("ok", "2"),
    exitCode: 1,
    stderrIncludes: "stop-gate: field stop_count must be a number >= 0",
  },
  {
    hook,
    name: "rejects a non-string last_message",
    event: stopEvent(42),
    exitCode: 1,
    stderrIncludes: "stop-gate: field last_message must be a string",
  },
];
