/**
 * The C hook of docs/writing-hooks.md ("Hooks in other languages") compiles
 * with the command given there and blocks a force push through `hookbox
 * dispatch`, as written.
 */
import assert from "node:assert/strict";
import { runCli } from "../_cli.ts";
import { ROOT } from "../_helpers.ts";

const DOC = await Deno.readTextFile(`${ROOT}/docs/writing-hooks.md`);

/** The first fenced block of `lang` after `heading`. */
function block(heading: string, lang: string): string {
  const at = DOC.indexOf(`## ${heading}\n`);
  assert.ok(at >= 0, heading);
  const open = DOC.indexOf("```" + lang + "\n", at);
  return DOC.slice(open + lang.length + 4, DOC.indexOf("\n```\n", open) + 1);
}

Deno.test("the C hook of docs/writing-hooks.md compiles as written and blocks a force push", async () => {
  const dir = await Deno.makeTempDir({ prefix: "hookbox-c-hook-" });
  try {
    await Deno.mkdir(`${dir}/no-force-push`);
    await Deno.writeTextFile(`${dir}/run.c`, block("Hooks in other languages", "c"));
    await Deno.writeTextFile(
      `${dir}/no-force-push/HOOK.md`,
      "---\nname: no-force-push\ndescription: C\ntrigger: pre-tool-call\n---\n",
    );
    const command = block("Hooks in other languages", "sh").trim();
    assert.match(command, /^clang /);
    const built = await new Deno.Command("bash", { args: ["-c", command], cwd: dir }).output();
    assert.equal(built.code, 0, new TextDecoder().decode(built.stderr));
    const event = (command: string) =>
      JSON.stringify({
        event_type: "pre-tool-call",
        session_id: "s",
        tool_name: "Bash",
        tool_input: { command },
      });
    const blocked = await runCli(["dispatch", "--hooks-dir", dir], {
      cwd: dir,
      stdin: event("git push --force origin main"),
    });
    assert.equal(blocked.code, 2, blocked.stderr);
    assert.equal(blocked.stderr.trim(), "force pushes are not allowed");
    const allowed = await runCli(["dispatch", "--hooks-dir", dir], {
      cwd: dir,
      stdin: event("git push origin main"),
    });
    assert.equal(allowed.code, 0, allowed.stderr);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
