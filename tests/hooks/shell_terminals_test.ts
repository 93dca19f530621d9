/**
 * Shells that later commands type into. A detached tmux session runs a shell
 * that `tmux send-keys` types into, and tmux runs the shell commands its
 * commands are given (`new -d 'cmd'`, `run-shell`, `if-shell`); `su`, `sudo
 * -i`, `script`, `tmux attach` open a shell that reads what is typed into it
 * (Codex's `write_stdin`, Copilot's `write_bash`), which no hook sees. Each
 * tmux form is run by the real tmux (the typed command makes a file), then
 * shown to shell-guard with `rm -rf ~` inside: blocked; harmless ones allowed.
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { shellCall, shellGuard } from "./_real_shell.ts";
import { tempDir } from "../_helpers.ts";

/** tmux forms, `CMD` standing for the command typed or handed on. */
const TMUX_FORMS = [
  "tmux new -d -s t; tmux send-keys -t t 'CMD' Enter",
  "tmux new -d -s t; tmux send -t t -l 'CMD'; tmux send -t t C-m",
  "tmux new -d -s t 'CMD; sleep 30'",
  "tmux new -d -s t \\; run-shell 'CMD'",
  "tmux new -d -s t \\; if-shell true 'run-shell \"CMD\"'",
  "tmux new -d -s t \\; split-window -d 'CMD; sleep 30'",
];

/**
 * Runs `form` with `CMD` as `touch ran` under bash in a fresh folder, tmux on
 * a socket of its own there; true when the command ran (tmux runs it after
 * the form returns: waited for, at most 30 s).
 */
async function runsInTmux(form: string): Promise<boolean> {
  const dir = await tempDir("hookbox-tmux-");
  const env = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: dir,
    TERM: "xterm",
    SHELL: "/bin/sh",
    TMUX_TMPDIR: dir,
  };
  try {
    await new Deno.Command("bash", {
      args: ["-c", form.replaceAll("CMD", `touch ${dir}/ran`)],
      cwd: dir,
      env,
      clearEnv: true,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).output();
    for (let i = 0; i < 300; i++) {
      if (await Deno.stat(`${dir}/ran`).then(() => true, () => false)) return true;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return false;
  } finally {
    await new Deno.Command("tmux", { args: ["kill-server"], env, clearEnv: true, stderr: "null" })
      .output();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("tmux runs the command each form types or hands it", async () => {
  for (const form of TMUX_FORMS) ok(await runsInTmux(form), `tmux ran it: ${form}`);
});

const call = shellCall;

Deno.test("shell-guard reads what tmux and screen type or run: rm -rf ~ blocked, npm test not", async () => {
  const executor = shellGuard();
  try {
    const screen = [
      "screen -dmS t bash -c 'CMD'",
      "screen -S t -X stuff 'CMD^M'",
      "screen -S t -p 0 -X stuff $'CMD\\n'",
      "screen -S t -X exec CMD",
    ];
    for (const form of TMUX_FORMS.concat(screen)) {
      const blocked = await executor.dispatch(call(form.replaceAll("CMD", "rm -rf ~")));
      assertEquals(blocked.decision, "block", form);
      match(blocked.reason ?? "", /blocked by rule "rm-root"/, form);
      const allowed = await executor.dispatch(call(form.replaceAll("CMD", "npm test")));
      assertEquals(allowed.decision, "allow", `${form}: ${allowed.reason}`);
    }
  } finally {
    await executor.close();
  }
});

Deno.test({
  name: "su reads a script piped into it as root's shell",
  // CI runs as root, and su asks root for no password.
  ignore: Deno.uid() !== 0,
  fn: suRunsPipedScript,
});

async function suRunsPipedScript() {
  const dir = await tempDir("hookbox-su-");
  try {
    await new Deno.Command("bash", {
      args: ["-c", `echo 'touch ${dir}/ran' | su`],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).output();
    ok(await Deno.stat(`${dir}/ran`).then(() => true, () => false), "su ran the piped script");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("shell-guard blocks a shell opened for later typing, and reads one fed a script", async () => {
  const executor = shellGuard();
  try {
    const opened = [
      "su",
      "su - root",
      "sudo -i",
      "sudo -u root -s",
      "sudo su -",
      "doas -s",
      "pkexec",
      "script -q /dev/null",
      "chroot /",
      "unshare -r",
      "nsenter -t 1 -m -u -i -n -p",
      "machinectl shell",
      "tmux",
      "tmux new -s t",
      "tmux attach -t t",
      "screen",
      "screen -r t",
    ];
    const blockedBy = async (commands: string[], rule: string) => {
      for (const command of commands) {
        const result = await executor.dispatch(call(command));
        assertEquals(result.decision, "block", command);
        match(result.reason ?? "", new RegExp(`blocked by rule "${rule}"`), command);
      }
    };
    await blockedBy(opened, "typed-session");
    await blockedBy(["echo 'rm -rf ~' | su", "echo 'rm -rf ~' | sudo -s"], "rm-root");
    const runs = [
      "su -c 'make test' alice",
      "sudo -u alice ls",
      "script -qc 'make test' build.log",
      "tmux new -d -s srv 'npm run dev'",
      "tmux ls",
      "tmux capture-pane -p -t srv",
      "screen -dmS srv npm run dev",
      "screen -ls",
      "chroot /srv/jail /bin/ls",
      "echo 'ls' | su",
    ];
    for (const command of runs) {
      const result = await executor.dispatch(call(command));
      assertEquals(result.decision, "allow", `${command}: ${result.reason}`);
    }
  } finally {
    await executor.close();
  }
});
