/**
 * Event tables for the built-in hooks in `hooks/`. Shared by the `node`
 * subprocess tests and the differential (compiled WebAssembly) tests, so
 * each case states the complete expected protocol output.
 *
 * @module
 */
import { guardCases } from "./_cases_guard.ts";
import { redactorCases } from "./_cases_redactor.ts";
import { markerCases } from "./_cases_marker.ts";
import { gateCases } from "./_cases_gate.ts";

/** One event run through one hook, with the result it must produce. */
export interface HookCase {
  /** Folder name under `hooks/`. */
  hook: string;
  /** Short description, used in test names. */
  name: string;
  /** The event, sent as JSON on stdin. */
  event: Record<string, unknown>;
  /** Sent as-is instead of `event` (malformed input). */
  rawStdin?: string;
  /** Expected exit code. */
  exitCode: number;
  /** Expected stdout parsed as JSON; absent means stdout must be empty. */
  stdout?: Record<string, unknown>;
  /** Text stderr must contain; absent means stderr must be empty. */
  stderrIncludes?: string;
}

/** The first line of what the engine prints for stdin that is not JSON. */
export const NOT_JSON = "SyntaxError: the event on stdin is not JSON: ";

/**
 * Malformed stdin cases, the same for every hook. The built-in hooks are
 * function-style, so stdin that is not JSON never reaches them: the engine
 * (and the node host of the tests) reports it, exit 1, in the parser's words.
 * hookbox itself only ever sends validated JSON objects.
 */
function malformedCases(hook: string): HookCase[] {
  return [
    {
      hook,
      name: "stdin is not JSON",
      event: {},
      rawStdin: "{not json",
      exitCode: 1,
      stderrIncludes: NOT_JSON,
    },
    {
      hook,
      name: "stdin is empty",
      event: {},
      rawStdin: "",
      exitCode: 1,
      stderrIncludes: NOT_JSON,
    },
    {
      hook,
      name: "event is an array",
      event: {},
      rawStdin: "[1,2]",
      exitCode: 1,
      stderrIncludes: `${hook}: event must be a JSON object`,
    },
  ];
}

/** The stdin text for a case. */
export function stdinOf(c: HookCase): string {
  return c.rawStdin ?? JSON.stringify(c.event);
}

/** Every case for every built-in hook. */
export const HOOK_CASES: HookCase[] = [
  ...guardCases,
  ...redactorCases,
  ...markerCases,
  ...gateCases,
  ...["shell-guard", "secret-redactor", "injection-marker", "stop-gate"].flatMap(malformedCases),
];
