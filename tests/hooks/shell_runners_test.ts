/**
 * Commands that run other commands in forms shell-guard did not read: a
 * function defined with `function NAME {`, `coproc`, `trap`'s and `alias`'s
 * code, text printed into a shell or `.` (`echo '...' | bash`,
 * `bash <(echo '...')`), `env -S`, `eval --`, wrappers it did not know
 * (`setsid`, `flock FILE`, `script -c`) and zsh's precommand modifiers and
 * `=cmd`. Each form is run by the real shell (it makes a file in a temporary
 * folder), then shown to shell-guard with `rm -rf ~` inside: blocked; the
 * same forms running harmless commands stay allowed.
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { runsInShell, shellCall, shellGuard } from "./_real_shell.ts";

/** Each form and the shell that runs it, `CMD` standing for the command it runs. */
const FORMS: [string, string][] = [
  ["bash", "function f { CMD; }; f"],
  ["bash", "coproc CMD; wait"],
  ["bash", "coproc X { CMD; }; wait"],
  ["bash", "eval -- CMD"],
  ["bash", "trap 'CMD' EXIT"],
  ["bash", "trap -- 'CMD' EXIT"],
  ["bash", "echo 'CMD' | bash"],
  ["bash", "printf '%s\\n' 'CMD' | sh"],
  ["bash", "echo 'CMD' | . /dev/stdin"],
  ["bash", "bash <(echo 'CMD')"],
  ["bash", "source <(printf '%s' 'CMD')"],
  ["bash", "env -S 'CMD'"],
  ["bash", "env --split-string='CMD'"],
  ["bash", "setsid -w CMD"],
  ["bash", "flock lock CMD"],
  ["bash", "script -qc 'CMD' /dev/null"],
  ["bash", "nice -n 1 flock lock env -S 'CMD'"],
  ["bash", "shopt -s expand_aliases\nalias x='CMD'\nx"],
  ["zsh", "=CMD"],
  ["zsh", "noglob CMD"],
  ["zsh", "nocorrect CMD"],
  ["zsh", "repeat 1 CMD"],
];

Deno.test("bash and zsh run the command in each form", async () => {
  for (const [shell, form] of FORMS) {
    ok(await runsInShell(shell, form), `${shell} ran it: ${form}`);
  }
});

const call = shellCall;

Deno.test("shell-guard blocks rm -rf ~ run by each form, and allows harmless ones", async () => {
  const executor = shellGuard();
  try {
    for (const [, form] of FORMS) {
      const result = await executor.dispatch(call(form.replaceAll("CMD", "rm -rf ~")));
      assertEquals(result.decision, "block", form);
      match(result.reason ?? "", /blocked by rule "rm-root"/, form);
    }
    for (const [, form] of FORMS) {
      const harmless = form.replaceAll("CMD", "ls -la");
      const result = await executor.dispatch(call(harmless));
      assertEquals(result.decision, "allow", `${harmless}: ${result.reason}`);
    }
    // Words naming a command as data stay data.
    for (const command of ["grep -rn mkfs docs/", "man rm", "git log --grep reboot"]) {
      assertEquals((await executor.dispatch(call(command))).decision, "allow", command);
    }
  } finally {
    await executor.close();
  }
});
