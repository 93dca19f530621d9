/**
 * Text a shell turns into code: a quoted value assigned to a variable is data
 * to the reader, yet bash's `${X@P}` runs the command substitutions in it, and
 * arithmetic (`$((X))`, `[[ $X -eq 1 ]]`, `declare -i`) those in an array
 * subscript of it; zsh runs a glob qualifier's code (`*(e:'cmd':)`) and
 * evaluates with the `(e)` flag. Each form is run by the real shell (it makes
 * a file in a temporary folder), then shown to shell-guard with `rm -rf ~`
 * inside: blocked.
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { runsInShell, shellGuard } from "./_real_shell.ts";

/** Each form and the shell that runs it, `CMD` standing for the command hidden in the data. */
const FORMS: [string, string][] = [
  ["bash", `X='$(CMD)'; echo "\${X@P}"`],
  ["bash", `X='a[$(CMD)]'; echo $((X))`],
  ["bash", `X='a[$(CMD)]'; [[ $X -eq 1 ]]`],
  ["bash", `declare X='a[$(CMD)]'; declare -i n=X`],
  ["bash", `X=''; X+='a[$(CMD)]'; let n=X`],
  // A subscripted name a builtin evaluates.
  ["bash", `a=(1); test -v 'a[$(CMD)]'`],
  ["bash", `a=(1); printf -v 'a[$(CMD)]' x`],
  ["bash", `a=(1); unset 'a[$(CMD)]'`],
  ["bash", `a=(1); declare 'a[$(CMD)]=1'`],
  ["bash", `a=(1); let 'a[$(CMD)]=1'`],
  ["bash", `a=(1); [[ -v 'a[$(CMD)]' ]]`],
  // zsh: a glob qualifier's code runs once per file the glob matches; the `e` flag evaluates.
  ["zsh", `ls *(e:'CMD':)`],
  ["zsh", `ls *(.e:'CMD':)`],
  ["zsh", `print -r -- \${(e):-'$(CMD)'}`],
  ["zsh", `X='$(CMD)'; print -r -- "\${(e)X}"`],
];

Deno.test("bash and zsh run the command hidden in each form of data-as-code", async () => {
  for (const [shell, form] of FORMS) {
    ok(await runsInShell(shell, form), `${shell} ran it: ${form}`);
  }
});

Deno.test("shell-guard blocks rm -rf ~ hidden in data a shell turns into code", async () => {
  const executor = shellGuard();
  try {
    for (const [, form] of FORMS) {
      const result = await executor.dispatch({
        event_type: "pre-tool-call",
        session_id: "s",
        tool_name: "Bash",
        tool_input: { command: form.replaceAll("CMD", "rm -rf ~") },
      });
      assertEquals(result.decision, "block", form);
      match(result.reason ?? "", /blocked by rule "(rm-root|eval-data|zsh-eval)"/, form);
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
      tool_input: {
        command: "echo '$(rm -rf ~)'; git commit -m 'fix $(thing)'; grep -E 'x(err|e:)' log",
      },
    });
    assertEquals(printed.decision, "allow");
  } finally {
    await executor.close();
  }
});

Deno.test("shell-guard looks for zsh's (e) flag and bash's @P in one pass: 4 KB of open ones cost what other text does", async () => {
  const executor = shellGuard();
  try {
    const fuel = async (command: string) => {
      const result = await executor.dispatch({
        event_type: "pre-tool-call",
        session_id: "s",
        tool_name: "Bash",
        tool_input: { command },
      });
      assertEquals(result.decision, "allow", result.reason ?? "");
      return result.hooks[0]!.fuel!;
    };
    // The same text with `$` for `%`: only the flag check tells them apart. A regex that looked
    // past each `${(` to the end took 2.4 times as much.
    const open = await fuel("${(x".repeat(1024));
    const plain = await fuel("%{(x".repeat(1024));
    ok(open <= plain * 1.3, `${open} fuel against ${plain}`);
    // Likewise bash's @P: 4 KB of `${x` that never close (a regex took 11 times as much).
    const unclosed = await fuel("${x".repeat(1365));
    const reference = await fuel("${x}".repeat(1024));
    ok(unclosed <= reference * 2, `${unclosed} fuel against ${reference}`);
  } finally {
    await executor.close();
  }
});
