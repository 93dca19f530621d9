/**
 * An event's text is hostile (a model's, a tenant's, a repository's). Error
 * messages quote what they refuse, and the CLI prints them on one line: a
 * megabyte-long event type made `hookbox dispatch` spend minutes folding its
 * spaces (a quadratic regex) and comparing it letter by letter with every
 * event name, then print the megabyte.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { oneLine } from "../../packages/core/errors.ts";
import { runCli } from "../_cli.ts";
import { tempDir } from "../_helpers.ts";

Deno.test("`dispatch` refuses a 1 MiB event type with one short line", async () => {
  const cwd = await tempDir("hookbox-long-");
  const event = { event_type: `pre-tool-call${" ".repeat(1 << 20)}x\n`, session_id: "s" };
  const run = await runCli(["dispatch"], { cwd, stdin: JSON.stringify(event) });
  assert.equal(run.code, 1);
  const lines = run.stderr.trim().split("\n");
  assert.equal(lines.length, 1, run.stderr.slice(0, 300));
  assert.match(
    lines[0]!,
    /EVENT_INVALID: .*unknown event type "pre-tool-call {51}… \(1048527 more characters\)"/,
  );
  assert.ok(lines[0]!.length < 1000, `${lines[0]!.length} characters`);
});

Deno.test("`oneLine` folds as a line-break-in-white-space regex would, on any text", () => {
  const piece = fc.constantFrom(" ", "\t", "\r", "\n", "\u00a0", "\u2028", "a", "b", "é");
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 30 }).map((p) => p.join("")), (text) => {
      assert.equal(oneLine(text), text.replace(/\s*\n\s*/g, " "));
    }),
    { numRuns: 5000 },
  );
});
