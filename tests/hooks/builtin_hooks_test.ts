/**
 * The built-in hooks, run as `node` subprocesses over the shared case table.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { readStdout } from "../../packages/core/schema/output.ts";
import { HOOK_CASES, stdinOf } from "./_cases.ts";
import { runNode } from "./_run_node.ts";

for (const c of HOOK_CASES) {
  Deno.test(`${c.hook}: ${c.name}`, async () => {
    const run = await runNode(c.hook, stdinOf(c));
    const context = `stdout=${run.stdout} stderr=${run.stderr}`;
    strictEqual(run.exitCode, c.exitCode, context);
    if (c.stdout === undefined) strictEqual(run.stdout, "", context);
    else {
      deepStrictEqual(JSON.parse(run.stdout), c.stdout);
      strictEqual(readStdout(run.stdout).kind, "control", `valid control fields: ${context}`);
    }
    if (c.stderrIncludes === undefined) strictEqual(run.stderr, "", context);
    else {
      strictEqual(run.stderr.includes(c.stderrIncludes), true, context);
      strictEqual(run.stderr.trim().split("\n").length, 1, `one line: ${context}`);
    }
  });
}
