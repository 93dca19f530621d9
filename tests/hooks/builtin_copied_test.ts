/**
 * The built-in hooks work wherever they are copied (issue 31): their imports of
 * hookbox's library are `hookbox:lib/NAME.js`, resolved by the compiler, never a
 * relative path out of the hook folder.
 */
import assert from "node:assert/strict";
import { compileJsHook } from "../../packages/compile/js.ts";
import { createExecutor } from "../../packages/hookbox/deno.ts";
import { ROOT, tempDir, toolEvent } from "../_helpers.ts";
import { TEST_CACHE } from "../compile/_js_runner.ts";

Deno.test("a built-in hook copied into a project's .agents/hooks compiles there and guards", async () => {
  const project = await tempDir("hookbox-copied-");
  try {
    const hooks = `${project}/.agents/hooks`;
    await Deno.mkdir(hooks, { recursive: true });
    await new Deno.Command("cp", { args: ["-r", `${ROOT}/hooks/shell-guard`, hooks] }).output();
    for await (const entry of Deno.readDir(`${hooks}/shell-guard/scripts`)) {
      const text = await Deno.readTextFile(`${hooks}/shell-guard/scripts/${entry.name}`);
      assert.doesNotMatch(
        text,
        /from "\.\.\/\.\./,
        `${entry.name} imports nothing outside its folder`,
      );
    }
    const executor = createExecutor({ projectDir: hooks, userDir: null, cacheDir: TEST_CACHE });
    try {
      const denied = await executor.dispatch(toolEvent({ tool_input: { command: "rm -rf /" } }));
      assert.equal(denied.decision, "block", JSON.stringify(denied.hooks));
      assert.equal(denied.blocked_by, "shell-guard");
      const fine = await executor.dispatch(toolEvent({ tool_input: { command: "ls -la" } }));
      assert.equal(fine.decision, "allow", JSON.stringify(fine.hooks));
    } finally {
      await executor.close();
    }
  } finally {
    await Deno.remove(project, { recursive: true });
  }
});

Deno.test("an import of hookbox:lib that does not exist names what the library offers", async () => {
  const dir = await tempDir("hookbox-lib-missing-");
  try {
    await Deno.mkdir(`${dir}/scripts`);
    await Deno.writeTextFile(
      `${dir}/scripts/run.mjs`,
      'import { x } from "hookbox:lib/nope.js";\nconsole.log(x);\n',
    );
    await assert.rejects(
      compileJsHook(`${dir}/scripts/run.mjs`, { cacheDir: TEST_CACHE }),
      (err: Error) =>
        /hookbox:lib\/nope\.js is not in hookbox's library.*hook_io\.js/s.test(err.message),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
