/**
 * The TypeScript-with-npm and AssemblyScript examples of
 * docs/writing-hooks.md work as written: the package installed in the hook
 * folder is bundled into the plugin, and each hook passes the cases
 * `hookbox init` wrote beside it.
 */
import assert from "node:assert/strict";
import { ROOT, tempDir } from "../_helpers.ts";

const DOC = await Deno.readTextFile(`${ROOT}/docs/writing-hooks.md`);

/** The fenced blocks of the section under `## heading`, in order, as [lang, text]. */
function blocks(heading: string): [string, string][] {
  const start = DOC.indexOf(`## ${heading}\n`);
  assert.ok(start >= 0, heading);
  const end = DOC.indexOf("\n## ", start + 1);
  const section = DOC.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => [m[1]!, m[2]!]);
}

async function run(cmd: string, args: string[], cwd: string) {
  const out = await new Deno.Command(cmd, { args, cwd, stdin: "null" }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

const hookbox = (cwd: string, ...args: string[]) =>
  run(Deno.execPath(), ["run", "-A", `${ROOT}/packages/cli/main.ts`, ...args], cwd);

Deno.test("the TypeScript hook with an npm package of docs/writing-hooks.md works as written", async () => {
  const dir = await tempDir("hookbox-ts-npm-");
  try {
    const [[shLang, sh], [tsLang, ts]] = blocks("TypeScript with an npm package") as [
      [string, string],
      [string, string],
    ];
    assert.deepEqual([shLang, tsLang], ["sh", "ts"]);
    const [init, install] = sh!.trim().split("\n");
    assert.equal(init, "hookbox init no-force-push --lang ts");
    assert.equal((await hookbox(dir, ...init!.split(" ").slice(1))).code, 0);
    const npm = /^cd no-force-push && (npm install .*)$/.exec(install!);
    assert.ok(npm, install);
    const installed = await run("npm", npm[1]!.split(" ").slice(1), `${dir}/no-force-push`);
    assert.equal(installed.code, 0, installed.stderr);
    await Deno.writeTextFile(`${dir}/no-force-push/scripts/run.ts`, ts!);
    const tested = await hookbox(dir, "test", "no-force-push");
    assert.equal(tested.code, 0, tested.stdout + tested.stderr);
    assert.match(tested.stderr, /2 passed, 0 failed/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the AssemblyScript hook of docs/writing-hooks.md works as written", async () => {
  const dir = await tempDir("hookbox-as-doc-");
  try {
    const [[lang, source]] = blocks("AssemblyScript") as [[string, string]];
    assert.equal(lang, "ts");
    assert.equal((await hookbox(dir, "init", "no-force-push", "--lang", "as")).code, 0);
    await Deno.writeTextFile(`${dir}/no-force-push/scripts/run.as.ts`, source!);
    const tested = await hookbox(dir, "test", "no-force-push");
    assert.equal(tested.code, 0, tested.stdout + tested.stderr);
    assert.match(tested.stderr, /2 passed, 0 failed/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
