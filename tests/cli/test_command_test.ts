/**
 * `hookbox init` writes a hook in each language that `hookbox test` passes
 * as written, through the real sandbox; a case that expects the wrong thing,
 * a mistyped key, an invalid event, a hook that does not load and a missing
 * folder each fail with a line that says what and where.
 */
import assert from "node:assert/strict";
import { ROOT, tempDir } from "../_helpers.ts";

async function hookbox(cwd: string, ...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}/packages/cli/main.ts`, ...args],
    cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

Deno.test("hookbox init writes a JS, a TS and an AssemblyScript hook whose tests pass", async () => {
  const dir = await tempDir("hookbox-init-");
  try {
    for (const lang of ["js", "ts", "as"]) {
      const made = await hookbox(dir, "init", `guard-${lang}`, "--lang", lang);
      assert.equal(made.code, 0, made.stderr);
      assert.match(made.stdout, new RegExp(`wrote ${dir}/guard-${lang}`));
    }
    const out = await hookbox(dir, "test", ".");
    assert.equal(out.code, 0, out.stdout + out.stderr);
    for (const lang of ["js", "ts", "as"]) {
      assert.match(out.stdout, new RegExp(`ok   guard-${lang}/tests/blocks-force-push\\.json`));
      assert.match(out.stdout, new RegExp(`ok   guard-${lang}/tests/allows-other-commands\\.json`));
    }
    assert.match(out.stderr, /6 passed, 0 failed/);
    // A second init of the same name refuses to overwrite it.
    const again = await hookbox(dir, "init", "guard-js");
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already exists/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("hookbox init writes a C and a Rust hook whose build.sh makes the plugin its tests pass", async () => {
  const dir = await tempDir("hookbox-init-");
  // Debian's rustc, with its wasm32-wasi standard library, before any rustup toolchain.
  const env = { PATH: `/usr/bin:${Deno.env.get("PATH") ?? ""}` };
  try {
    for (const lang of ["c", "rust"]) {
      const made = await hookbox(dir, "init", `guard-${lang}`, "--lang", lang);
      assert.equal(made.code, 0, made.stderr);
      assert.match(made.stdout, new RegExp(`next: ${dir}/guard-${lang}/build\.sh && hookbox test`));
    }
    // Before the build: the hook has no plugin yet, and the line says how to make it.
    const early = await hookbox(dir, "test", "guard-c");
    assert.equal(early.code, 1);
    assert.match(
      early.stdout,
      /HOOK_ENTRY_MISSING .*build\.sh is here: run it to make plugin\.wasm/,
    );
    for (const lang of ["c", "rust"]) {
      const built = await new Deno.Command(`${dir}/guard-${lang}/build.sh`, { env }).output();
      assert.equal(built.code, 0, new TextDecoder().decode(built.stderr));
    }
    const out = await hookbox(dir, "test", ".");
    assert.equal(out.code, 0, out.stdout + out.stderr);
    assert.match(out.stderr, /4 passed, 0 failed/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("hookbox test says what differed, case by case, and exits 1", async () => {
  const dir = await tempDir("hookbox-test-");
  try {
    assert.equal((await hookbox(dir, "init", "guard")).code, 0);
    const write = (name: string, value: unknown) =>
      Deno.writeTextFile(`${dir}/guard/tests/${name}`, JSON.stringify(value));
    const push = { tool_name: "Bash", tool_input: { command: "git push -f" } };
    await write("wrong.json", { event: push, expect: { decision: "allow", outcome: "ok" } });
    await write("typo.json", { event: push, expect: { decison: "allow" } });
    await write("bad-event.json", { event: { event_type: "nope" }, expect: {} });
    await Deno.writeTextFile(`${dir}/guard/tests/not-json.json`, "{");
    // A megabyte expected: the line shows its head and its length, not the megabyte.
    await write("huge.json", { event: push, expect: { modified_input: "x".repeat(1_000_000) } });
    await Deno.mkdir(`${dir}/broken`);
    await Deno.writeTextFile(`${dir}/broken/HOOK.md`, "---\nname: broken\n---\n");
    const out = await hookbox(dir, "test", "guard", "broken", "nowhere");
    assert.equal(out.code, 1);
    const lines = out.stdout;
    assert.match(lines, /ok {3}guard\/tests\/blocks-force-push\.json/);
    assert.match(
      lines,
      /FAIL guard\/tests\/wrong\.json\n {5}decision: expected allow, got block \(reason: "force pushes are not allowed"\)\n {5}outcome: expected ok, got block/,
    );
    assert.match(
      lines,
      /FAIL guard\/tests\/typo\.json\n.*Unrecognized key: "decison"; did you mean "decision"\?/,
    );
    assert.match(
      lines,
      /FAIL guard\/tests\/bad-event\.json\n.*EVENT_INVALID.*unknown event type "nope"/,
    );
    assert.match(lines, /FAIL guard\/tests\/not-json\.json\n.*cannot read the case/);
    assert.match(
      lines,
      /FAIL guard\/tests\/huge\.json\n {5}modified_input: expected "x{399}… \(1000002 characters\), got null\n/,
    );
    assert.ok(lines.length < 10_000, `${lines.length} characters of output`);
    assert.match(lines, /FAIL HOOK_MANIFEST_INVALID .*broken/);
    assert.match(lines, /FAIL .*nowhere: no such folder/);
    assert.match(out.stderr, /2 passed, 5 failed, 2 hook folder\(s\) could not be tested/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("hookbox test --json reports every case, and a folder without cases is not a pass", async () => {
  const dir = await tempDir("hookbox-test-");
  try {
    assert.equal((await hookbox(dir, "init", "guard")).code, 0);
    const out = await hookbox(dir, "test", "guard", "--json");
    assert.equal(out.code, 0, out.stderr);
    const json = JSON.parse(out.stdout);
    assert.match(out.stderr, /ok {3}guard\/tests\/blocks-force-push\.json/);
    assert.deepEqual(
      json.cases.map((c: { file: string; passed: boolean }) => [c.file, c.passed]),
      [["tests/allows-other-commands.json", true], ["tests/blocks-force-push.json", true]],
    );
    await Deno.remove(`${dir}/guard/tests`, { recursive: true });
    const none = await hookbox(dir, "test", "guard");
    assert.equal(none.code, 1);
    assert.match(none.stdout, /guard: no tests/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
