/**
 * The command line explains itself: `--help` on every command prints its
 * options from the one table that parses them, `--version` the package's
 * version, a mistyped command names the nearest one, and docs/cli.md lists
 * every option and environment variable of the table.
 */
import assert from "node:assert/strict";
import { COMMANDS } from "../../packages/cli/commands.ts";
import { ROOT } from "../_helpers.ts";

async function hookbox(...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}/packages/cli/main.ts`, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

Deno.test("every command's --help prints its usage, options and environment, and exits 0", async () => {
  for (const [name, spec] of Object.entries(COMMANDS)) {
    for (const flag of ["--help", "-h"]) {
      const out = await hookbox(name, flag);
      assert.equal(out.code, 0, `${name} ${flag}: ${out.stderr}`);
      assert.match(out.stdout, new RegExp(`^usage: hookbox ${name}`));
      for (const option of Object.keys(spec.options)) {
        assert.ok(out.stdout.includes(`--${option}`), `${name} --help names --${option}`);
      }
      for (const env of Object.keys((spec as { env?: object }).env ?? {})) {
        assert.ok(out.stdout.includes(env), `${name} --help names ${env}`);
      }
    }
  }
});

Deno.test("validate --help is help, not a folder named --help", async () => {
  const out = await hookbox("validate", "--help");
  assert.equal(out.code, 0);
  assert.doesNotMatch(out.stdout + out.stderr, /HOOK_DIR_UNREADABLE/);
});

Deno.test("--version prints the package's version; --help lists every command", async () => {
  const config = JSON.parse(await Deno.readTextFile(`${ROOT}/packages/hookbox/deno.json`));
  for (const flag of ["--version", "-V"]) {
    const out = await hookbox(flag);
    assert.equal(out.code, 0);
    assert.equal(out.stdout.trim(), `hookbox ${config.version}`);
  }
  const help = await hookbox("--help");
  assert.equal(help.code, 0);
  for (const name of Object.keys(COMMANDS)) assert.match(help.stdout, new RegExp(`\\n  ${name} `));
});

Deno.test("a mistyped command names the nearest one and exits 1", async () => {
  const out = await hookbox("dispath");
  assert.equal(out.code, 1);
  assert.match(out.stderr, /unknown command "dispath"; did you mean "dispatch"\?/);
});

Deno.test("an option of the table that the command does not accept alone is refused by name", async () => {
  const out = await hookbox("dispatch", "--timeout-ms", "5");
  assert.equal(out.code, 1);
  assert.match(out.stderr, /--timeout-ms needs --remote URL/);
});

Deno.test("docs/cli.md names every command, option and environment variable of the table", async () => {
  const doc = await Deno.readTextFile(`${ROOT}/docs/cli.md`);
  const missing: string[] = [];
  for (const [name, spec] of Object.entries(COMMANDS)) {
    if (!doc.includes(`\`${name}`)) missing.push(name);
    for (const option of Object.keys(spec.options)) {
      if (!doc.includes(`--${option}`)) missing.push(`${name} --${option}`);
    }
    for (
      const env of Object.keys((spec as { env?: object }).env ?? {}).flatMap((k) => k.split(", "))
    ) {
      if (!doc.includes(env)) missing.push(`${name} ${env}`);
    }
  }
  assert.deepEqual(missing, []);
});
