/**
 * Text bash turns into code: a quoted value assigned to a variable is data to
 * the reader, yet `${X@P}` runs the command substitutions in it, and
 * arithmetic (`$((X))`, `[[ $X -eq 1 ]]`, `declare -i`) those in an array
 * subscript of it. Each form is run by the real bash (it makes a file in a
 * temporary folder), then shown to shell-guard with `rm -rf ~` inside: blocked.
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { createExecutor } from "../../packages/hookbox/deno.ts";
import { ROOT, tempDir } from "../_helpers.ts";

/** Each form, `CMD` standing for the command hidden in the data. */
const FORMS = [
  `X='$(CMD)'; echo "\${X@P}"`,
  `X='a[$(CMD)]'; echo $((X))`,
  `X='a[$(CMD)]'; [[ $X -eq 1 ]]`,
  `declare X='a[$(CMD)]'; declare -i n=X`,
  `X=''; X+='a[$(CMD)]'; let n=X`,
];

Deno.test("bash runs the command hidden in each form of data-as-code", async () => {
  for (const form of FORMS) {
    const dir = await tempDir("hookbox-data-code-");
    try {
      await new Deno.Command("bash", {
        args: ["-c", form.replaceAll("CMD", "touch ran")],
        cwd: dir,
        stdout: "null",
        stderr: "null",
      }).output();
      ok(await Deno.stat(`${dir}/ran`).then(() => true, () => false), `bash ran it: ${form}`);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }
});

Deno.test("shell-guard blocks rm -rf ~ hidden in data bash turns into code", async () => {
  const executor = createExecutor({
    platformDirs: [`${ROOT}/hooks/shell-guard`],
    userDir: null,
    projectDir: null,
  });
  try {
    for (const form of FORMS) {
      const result = await executor.dispatch({
        event_type: "pre-tool-call",
        session_id: "s",
        tool_name: "Bash",
        tool_input: { command: form.replaceAll("CMD", "rm -rf ~") },
      });
      assertEquals(result.decision, "block", form);
      match(result.reason ?? "", /blocked by rule "(rm-root|eval-data)"/, form);
    }
    // A prompt expansion of any value is refused: what it runs is not in the text.
    const any = await executor.dispatch({
      event_type: "pre-tool-call",
      session_id: "s",
      tool_name: "Bash",
      tool_input: { command: 'X="$(cat notes.txt)"; echo "${X@P}"' },
    });
    match(any.reason ?? "", /blocked by rule "eval-data"/);
    // Quoted text that is only printed stays data.
    const printed = await executor.dispatch({
      event_type: "pre-tool-call",
      session_id: "s",
      tool_name: "Bash",
      tool_input: { command: "echo '$(rm -rf ~)'; git commit -m 'fix $(thing)'" },
    });
    assertEquals(printed.decision, "allow");
  } finally {
    await executor.close();
  }
});
