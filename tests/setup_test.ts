/**
 * The README's two set-up commands: `scripts/demo` and `scripts/test` run
 * `scripts/setup`, which installs only what is missing and says how it was
 * called wrong; CI runs the same `scripts/test`.
 */
import assert from "node:assert/strict";
import { ROOT } from "./_helpers.ts";

async function setup(...args: string[]) {
  const out = await new Deno.Command(`${ROOT}/scripts/setup`, { args }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

Deno.test("scripts/setup: usage and help; nothing installed where nothing is missing", async () => {
  const wrong = await setup("nope");
  assert.deepEqual([wrong.code, wrong.stderr.trim()], [2, "usage: scripts/setup demo|test"]);
  const help = await setup("--help");
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^Installs what hookbox needs on a Debian machine/);
  // The suite runs after `scripts/setup test`: everything is there, so it installs nothing.
  const again = await setup("test");
  assert.equal(again.code, 0, again.stderr);
  assert.doesNotMatch(again.stdout, /apt-get|npm install/);
});

Deno.test("the README's set-up commands, and CI, are the scripts that install and run", async () => {
  const readme = await Deno.readTextFile(`${ROOT}/README.md`);
  const block = /## Set up\n[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)![1]!;
  const commands = block.trim().split("\n").map((l) => l.replace(/\s+#.*$/, ""));
  assert.deepEqual(commands, ["scripts/demo", "scripts/test"]);
  for (const [script, task] of [["demo", "deno task demo"], ["test", "deno task test"]]) {
    const text = await Deno.readTextFile(`${ROOT}/scripts/${script}`);
    assert.match(text, new RegExp(`scripts/setup ${script}\\n`));
    assert.match(text, new RegExp(`exec ${task}`));
  }
  assert.match(await Deno.readTextFile(`${ROOT}/.ci/run`), /\nexec scripts\/test\n/);
});
