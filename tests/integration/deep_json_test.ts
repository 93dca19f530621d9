/**
 * Deep JSON from a hook or an event never crashes the host or changes the
 * decision: a hook's over-deep control output is an `error` record (fail
 * open), the guard after it still blocks and the CLI exits 2; an over-deep
 * event is refused with `JSON_TOO_DEEP` naming the field.
 */
import { deepStrictEqual as assertEquals, match } from "node:assert/strict";
import { createExecutor } from "../../packages/hookbox/deno.ts";
import { isHookboxError } from "../../packages/core/errors.ts";
import { tempTree } from "../_helpers.ts";
import { runCli } from "../_cli.ts";
import { pluginBytes, toolCall, writePluginHook } from "./_plugins.ts";

async function folder(root: string): Promise<string> {
  const dir = `${root}/platform`;
  await writePluginHook(dir, "deep", await pluginBytes("deep_output"), {
    priority: 500,
    limits: { output_kb: 1024 },
  });
  await writePluginHook(dir, "guard", await pluginBytes("guard_wasi"), { priority: 100 });
  return dir;
}

Deno.test("hookbox dispatch exits 2 when a guard blocks after a hook printed deep JSON", async () => {
  await using tree = await tempTree();
  const dir = await folder(tree.root);
  const stdin = JSON.stringify(toolCall("rm -rf /"));
  const run = await runCli(["dispatch", "--hooks-dir", dir], { cwd: tree.root, stdin });
  assertEquals(run.code, 2, run.stderr);
  const result = JSON.parse(run.stdout);
  assertEquals(result.decision, "block");
  assertEquals(result.hooks[0].outcome, "error");
  match(result.hooks[0].detail, /nests deeper than 64 levels/);
});

Deno.test("`executor.dispatch()` refuses an event nested too deep, naming the field", async () => {
  await using tree = await tempTree();
  const executor = createExecutor({ platformDirs: [await folder(tree.root)], userDir: null });
  let store: unknown = 1;
  for (let i = 0; i < 10_000; i++) store = { a: store };
  const event = { ...toolCall("ls"), store };
  try {
    await executor.dispatch(event);
    throw new Error("dispatch accepted a 10,000-level event");
  } catch (err) {
    if (!isHookboxError(err, "JSON_TOO_DEEP")) throw err;
    match(err.field ?? "", /^store\.a\.a/);
  } finally {
    await executor.close();
  }
});

Deno.test("hookbox dispatch refuses a deep event with exit 1 and the code", async () => {
  await using tree = await tempTree();
  const deep = `${"[".repeat(5000)}${"]".repeat(5000)}`;
  const stdin = JSON.stringify(toolCall("ls")).replace(/}$/, `,"store":${deep}}`);
  const run = await runCli(["dispatch"], { cwd: tree.root, stdin });
  assertEquals(run.code, 1);
  match(run.stderr, /JSON_TOO_DEEP/);
});
