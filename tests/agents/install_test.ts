/**
 * `hookbox install` / `uninstall` against existing agent config files: every
 * mapped event gets hookbox's entry, everything else in the file is kept,
 * installing twice changes nothing, uninstalling gives the original back; and
 * the installed command line, run as the agent would, answers in the
 * agent's protocol.
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { AGENT_EVENTS } from "../../packages/agents/adapters.ts";
import {
  CONFIG_FILES,
  editConfigText,
  type InstallableAgent,
  installInto,
  parseConfigText,
  uninstallFrom,
} from "../../packages/agents/install.ts";
import { main } from "../../packages/cli/main.ts";
import { ROOT, tempDir, withoutDenoNotices } from "../_helpers.ts";
import { GUARD_REASON, writeAgentHooks } from "./_agent_hooks.ts";

/** A config each agent might already have: other hooks and settings hookbox must keep. */
const EXISTING: Record<InstallableAgent, Record<string, unknown>> = {
  "claude-code": {
    permissions: { allow: ["Bash(npm test)"] },
    hooks: {
      PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./lint.sh" }] }],
    },
  },
  codex: { hooks: { Stop: [{ hooks: [{ type: "command", command: "notify-send done" }] }] } },
  "gemini-cli": {
    theme: "dark",
    hooks: {
      BeforeTool: [{ matcher: "write_file", hooks: [{ type: "command", command: "./check.sh" }] }],
    },
  },
  cursor: { version: 1, hooks: { afterFileEdit: [{ command: "./format.sh" }] } },
  copilot: {},
  windsurf: { hooks: { pre_read_code: [{ command: "python3 audit.py", show_output: false }] } },
};

/** `main(args)` with what it prints to stderr. */
const told = async (args: string[]): Promise<[number, string]> => {
  const error = console.error;
  const lines: string[] = [];
  console.error = (...parts: unknown[]) => void lines.push(parts.join(" "));
  try {
    return [await main(args), lines.join("\n")];
  } finally {
    console.error = error;
  }
};

const quiet = async (args: string[]) => {
  const error = console.error;
  console.error = () => {};
  try {
    return await main(args);
  } finally {
    console.error = error;
  }
};

for (const agent of Object.keys(EXISTING) as InstallableAgent[]) {
  Deno.test(`install/uninstall for ${agent} keeps the rest of its config and is idempotent`, async () => {
    const dir = await tempDir(`hookbox-install-${agent}-`);
    try {
      const file = `${dir}/${CONFIG_FILES[agent].project}`;
      const original = EXISTING[agent];
      const hadFile = Object.keys(original).length > 0;
      if (hadFile) {
        await Deno.mkdir(file.slice(0, file.lastIndexOf("/")), { recursive: true });
        await Deno.writeTextFile(file, JSON.stringify(original, null, 2));
      }
      assertEquals(await quiet(["install", "--agent", agent, "--project", dir]), 0);
      const once = await Deno.readTextFile(file);
      assertEquals(await quiet(["install", "--agent", agent, "--project", dir]), 0);
      assertEquals(await Deno.readTextFile(file), once, "a second install changes nothing");
      const installed = JSON.parse(once);
      // Every event the adapter maps has exactly one hookbox entry naming the agent and event.
      for (const event of Object.keys(AGENT_EVENTS[agent])) {
        const text = JSON.stringify(installed.hooks[event]);
        const line = `dispatch --agent ${agent} --event ${event}`;
        assertEquals(text.split(line).length - 1, 1, `${event}: ${text}`);
      }
      // What was there before is still there.
      for (const [key, value] of Object.entries(original)) {
        if (key !== "hooks") assertEquals(installed[key], value);
      }
      for (
        const [event, list] of Object.entries((original.hooks ?? {}) as Record<string, unknown[]>)
      ) {
        for (const entry of list) {
          ok(JSON.stringify(installed.hooks[event]).includes(JSON.stringify(entry)));
        }
      }
      assertEquals(await quiet(["uninstall", "--agent", agent, "--project", dir]), 0);
      if (hadFile) assertEquals(JSON.parse(await Deno.readTextFile(file)), original);
      else assertEquals(await Deno.stat(file).then(() => "exists", () => "gone"), "gone");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("install --http registers the agent's HTTP hook where it has one, and refuses elsewhere", async () => {
  const dir = await tempDir("hookbox-install-http-");
  try {
    const args = ["install", "--project", dir, "--http", "https://hooks.example.com/"];
    assertEquals(await quiet([...args, "--agent", "claude-code"]), 0);
    const claude = JSON.parse(await Deno.readTextFile(`${dir}/.claude/settings.json`));
    assertEquals(claude.hooks.PreToolUse, [{
      hooks: [{
        type: "http",
        url: "https://hooks.example.com/v1/agents/claude-code/events?event=PreToolUse",
        headers: { Authorization: "Bearer $HOOKBOX_KEY" },
        allowedEnvVars: ["HOOKBOX_KEY"],
      }],
    }]);
    assertEquals(await quiet([...args, "--agent", "copilot"]), 0);
    const copilot = JSON.parse(await Deno.readTextFile(`${dir}/.github/hooks/hookbox.json`));
    assertEquals(copilot.hooks.preToolUse, [{
      type: "http",
      url: "https://hooks.example.com/v1/agents/copilot/events?event=preToolUse",
    }]);
    // Switching back to the command form replaces the HTTP entries (one entry per event).
    assertEquals(await quiet(["install", "--project", dir, "--agent", "claude-code"]), 0);
    const again = JSON.parse(await Deno.readTextFile(`${dir}/.claude/settings.json`));
    assertEquals(again.hooks.PreToolUse.length, 1);
    ok(again.hooks.PreToolUse[0].hooks[0].command.includes("--agent claude-code"));
    assertEquals(await quiet([...args, "--agent", "codex"]), 1, "codex has no HTTP hooks");
    assertEquals(await quiet(["install", "--project", dir, "--agent", "agenthooks"]), 1);
    assertEquals(await quiet(["install", "--project", dir, "--agent", "vim"]), 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a config with comments keeps them: install edits only the event lists, uninstall gives the text back", async () => {
  const dir = await tempDir("hookbox-install-jsonc-");
  try {
    // Gemini CLI reads settings.json as JSON with comments (not trailing commas).
    const file = `${dir}/.gemini/settings.json`;
    await Deno.mkdir(`${dir}/.gemini`);
    const text = [
      "{",
      "\t// my settings",
      '\t"theme": "dark", /* or light */',
      '\t"hooks": {',
      "\t\t// keep this one",
      '\t\t"BeforeTool": [{ "matcher": "write_file", "hooks": [{ "type": "command", "command": "./check.sh" }] }]',
      "\t}",
      "}",
      "",
    ].join("\n");
    await Deno.writeTextFile(file, text);
    assertEquals(await quiet(["install", "--agent", "gemini-cli", "--project", dir]), 0);
    const installed = await Deno.readTextFile(file);
    for (const kept of ["// my settings", "/* or light */", "// keep this one", '"./check.sh"']) {
      ok(installed.includes(kept), `${kept} is kept:\n${installed}`);
    }
    ok(
      /\n\t\t"AfterTool": \[/.test(installed),
      `new lists in the file's tab indentation:\n${installed}`,
    );
    ok(!installed.includes("\n  "), "no space indentation mixed in");
    for (const event of Object.keys(AGENT_EVENTS["gemini-cli"])) {
      ok(installed.includes(`dispatch --agent gemini-cli --event ${event}`), event);
    }
    assertEquals(await quiet(["install", "--agent", "gemini-cli", "--project", dir]), 0);
    assertEquals(await Deno.readTextFile(file), installed, "a second install changes nothing");
    assertEquals(await quiet(["uninstall", "--agent", "gemini-cli", "--project", dir]), 0);
    assertEquals(await Deno.readTextFile(file), text);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("config edits follow the file's indentation and line endings and undo exactly", () => {
  const texts = [
    '{\r\n    "model": "x",\r\n    "hooks": {}\r\n}\r\n',
    "{}",
    '{"a":1,}',
    '{\n  "hooks": {\n    "Stop": [ ], // none yet\n  },\n}\n',
  ];
  for (const text of texts) {
    for (const agent of ["claude-code", "cursor"] as const) {
      const before = parseConfigText(text);
      const after = installInto(before, { agent });
      const installed = editConfigText(text, before, after);
      assertEquals(parseConfigText(installed), after, installed);
      if (text.includes("\r\n")) {
        ok(!/[^\r]\n/.test(installed), "CRLF kept");
        ok(installed.includes('\r\n        "'), "four-space indentation");
      }
      if (text.includes("// none yet")) ok(installed.includes("// none yet"));
      const back = editConfigText(installed, after, uninstallFrom(after, agent));
      assertEquals(parseConfigText(back), uninstallFrom(after, agent));
    }
  }
});

Deno.test("a config file with only comments left after uninstall is kept", async () => {
  const dir = await tempDir("hookbox-install-comment-only-");
  try {
    const file = `${dir}/.cursor/hooks.json`;
    await Deno.mkdir(`${dir}/.cursor`);
    const text = "// hooks for this repo\n{}\n";
    await Deno.writeTextFile(file, text);
    assertEquals(await quiet(["install", "--agent", "cursor", "--project", dir]), 0);
    ok((await Deno.readTextFile(file)).startsWith("// hooks for this repo\n"));
    assertEquals(await quiet(["uninstall", "--agent", "cursor", "--project", dir]), 0);
    ok((await Deno.readTextFile(file)).startsWith("// hooks for this repo\n"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a config file that is not a JSON object is left untouched", async () => {
  const dir = await tempDir("hookbox-install-bad-");
  try {
    const file = `${dir}/.gemini/settings.json`;
    await Deno.mkdir(`${dir}/.gemini`);
    for (
      const text of ['{\n  "theme": "dark"\n', "[1, 2]\n", '{ "a": 1 } trailing', "{ theme: dark }"]
    ) {
      await Deno.writeTextFile(file, text);
      assertEquals(await quiet(["install", "--agent", "gemini-cli", "--project", dir]), 1, text);
      assertEquals(await Deno.readTextFile(file), text);
      assertEquals(await quiet(["uninstall", "--agent", "gemini-cli", "--project", dir]), 1, text);
      assertEquals(await Deno.readTextFile(file), text);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("hostile config files: too deep, too large, a FIFO, or linked out of the project are refused untouched", async () => {
  const dir = await tempDir("hookbox-install-hostile-");
  const outside = await tempDir("hookbox-install-outside-");
  try {
    const file = `${dir}/.gemini/settings.json`;
    await Deno.mkdir(`${dir}/.gemini`);
    // 200,000 levels: the parser must not be reached (it recurses per level).
    const deep = `{"a":${"[".repeat(200_000)}${"]".repeat(200_000)}}`;
    const big = JSON.stringify({ theme: "x".repeat(2 * 1024 * 1024) });
    for (const [text, why] of [[deep, "nested deeper than 64 levels"], [big, "1048576"]]) {
      await Deno.writeTextFile(file, text!);
      const [code, said] = await told(["install", "--agent", "gemini-cli", "--project", dir]);
      assertEquals(code, 1);
      ok(said.includes(why!) && !said.includes("INTERNAL"), said);
      assertEquals(await Deno.readTextFile(file), text);
    }
    // A FIFO where the config file should be: reading it would wait for a writer forever.
    await Deno.remove(file);
    const made = await new Deno.Command("mkfifo", { args: [file] }).output();
    ok(made.success, "mkfifo");
    const [fifoCode, fifoSaid] = await told(["install", "--agent", "gemini-cli", "--project", dir]);
    assertEquals(fifoCode, 1);
    ok(fifoSaid.includes("not a regular file"), fifoSaid);
    ok((await Deno.lstat(file)).isFifo, "left untouched");
    // A repository's config folder or file that links to another program's settings.
    const theirs = `${outside}/settings.json`;
    await Deno.writeTextFile(theirs, '{"theme":"dark"}');
    await Deno.remove(`${dir}/.gemini`, { recursive: true });
    await Deno.symlink(outside, `${dir}/.gemini`);
    await Deno.mkdir(`${dir}/.cursor`);
    await Deno.symlink(theirs, `${dir}/.cursor/hooks.json`);
    for (
      const [mode, agent] of [["install", "gemini-cli"], ["install", "cursor"], [
        "uninstall",
        "cursor",
      ]]
    ) {
      const [code, said] = await told([mode!, "--agent", agent!, "--project", dir]);
      assertEquals(code, 1, `${mode} ${agent}`);
      ok(said.includes("outside the project"), said);
    }
    assertEquals(await Deno.readTextFile(theirs), '{"theme":"dark"}');
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("the installed command, run as the agent runs it, answers in the agent's protocol", async () => {
  const dir = await tempDir("hookbox-install-run-");
  try {
    await writeAgentHooks(`${dir}/hooks`);
    const cli = `${ROOT}/packages/cli/main.ts`;
    // The installed line is `<command> dispatch --agent claude-code --event PreToolUse`.
    assertEquals(
      await quiet([
        "install",
        "--agent",
        "claude-code",
        "--project",
        dir,
        "--command",
        `${Deno.execPath()} run -A ${cli}`,
      ]),
      0,
    );
    const settings = JSON.parse(await Deno.readTextFile(`${dir}/.claude/settings.json`));
    const line = `${settings.hooks.PreToolUse[0].hooks[0].command} --hooks-dir ${dir}/hooks`;
    // The installed command calls through the user's daemon: this test's own, gone with `dir`.
    await Deno.mkdir(`${dir}/run`, { mode: 0o700 });
    const run = async (shellLine: string, input: unknown) => {
      const child = new Deno.Command("sh", {
        args: ["-c", shellLine],
        env: { XDG_RUNTIME_DIR: `${dir}/run` },
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
        cwd: dir,
      }).spawn();
      const writer = child.stdin.getWriter();
      await writer.write(new TextEncoder().encode(JSON.stringify(input)));
      await writer.close();
      const out = await child.output();
      return {
        code: out.code,
        stdout: new TextDecoder().decode(out.stdout),
        stderr: withoutDenoNotices(new TextDecoder().decode(out.stderr)),
      };
    };
    const claude = await run(line, {
      session_id: "s",
      cwd: dir,
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "rm -rf /" },
    });
    assertEquals(claude.code, 0, claude.stderr);
    ok(claude.stdout.trimStart().startsWith("{"), "stdout starts with {");
    assertEquals(JSON.parse(claude.stdout).hookSpecificOutput.permissionDecision, "deny");
    const windsurf = await run(
      `${Deno.execPath()} run -A ${cli} dispatch --agent windsurf --hooks-dir ${dir}/hooks`,
      {
        agent_action_name: "pre_run_command",
        trajectory_id: "t",
        tool_info: { command_line: "rm -rf /", cwd: dir },
      },
    );
    assertEquals([windsurf.code, windsurf.stdout, windsurf.stderr.trim()], [2, "", GUARD_REASON]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("hookbox dispatch --agent refuses stdin over its cap before reading it all", async () => {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}/packages/cli/main.ts`, "dispatch", "--agent", "claude-code"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const chunk = new Uint8Array(1 << 20).fill(0x20);
  // 17 MiB of spaces; the command may stop reading (and close the pipe) at its 16 MiB cap.
  for (let i = 0; i < 17; i++) await writer.write(chunk).catch(() => {});
  await writer.close().catch(() => {});
  const out = await child.output();
  assertEquals(out.code, 1);
  ok(new TextDecoder().decode(out.stderr).includes("LIMIT_INPUT"));
});

/** `main(args)` with what it printed on stderr. */
async function withStderr(args: string[]): Promise<{ code: number; stderr: string }> {
  const error = console.error;
  const lines: string[] = [];
  console.error = (...parts: unknown[]) => lines.push(parts.join(" "));
  try {
    return { code: await main(args), stderr: lines.join("\n") };
  } finally {
    console.error = error;
  }
}

Deno.test("install refuses a config the agent would ignore, and a duplicate key; --force edits anyway", async () => {
  const dir = await tempDir("hookbox-install-ignored-");
  try {
    await Deno.mkdir(`${dir}/.claude`);
    await Deno.mkdir(`${dir}/.gemini`);
    const cases: [string, string, string, RegExp][] = [
      ["claude-code", ".claude/settings.json", '{\n  // mine\n  "model": "x"\n}\n', /comments/],
      ["claude-code", ".claude/settings.json", '{\n  "model": "x",\n}\n', /trailing comma/],
      ["gemini-cli", ".gemini/settings.json", '{\n  "theme": "dark",\n}\n', /trailing comma/],
      [
        "gemini-cli",
        ".gemini/settings.json",
        '{"hooks": {}, "hooks": {"x": 1}}',
        /duplicate key "hooks"/,
      ],
    ];
    for (const [agent, path, text, why] of cases) {
      await Deno.writeTextFile(`${dir}/${path}`, text);
      const out = await withStderr(["install", "--agent", agent, "--project", dir]);
      assertEquals(out.code, 1, `${agent} ${text}`);
      match(out.stderr, why);
      match(out.stderr, /--force/);
      assertEquals(await Deno.readTextFile(`${dir}/${path}`), text, "untouched");
    }
    await Deno.writeTextFile(`${dir}/.claude/settings.json`, '{\n  // mine\n  "model": "x"\n}\n');
    assertEquals(
      await quiet(["install", "--agent", "claude-code", "--project", dir, "--force"]),
      0,
    );
    ok((await Deno.readTextFile(`${dir}/.claude/settings.json`)).includes("// mine"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("install never writes through a link to nothing, and says what each agent's trust step is", async () => {
  const dir = await tempDir("hookbox-install-link-");
  const outside = await tempDir("hookbox-install-outside-");
  try {
    await Deno.mkdir(`${dir}/.claude`);
    await Deno.symlink(`${outside}/planted.json`, `${dir}/.claude/settings.json`);
    const out = await withStderr(["install", "--agent", "claude-code", "--project", dir]);
    assertEquals(out.code, 1);
    match(out.stderr, /does not exist; not writing through it/);
    assertEquals([...Deno.readDirSync(outside)], [], "nothing created outside the project");
    const codex = await withStderr(["install", "--agent", "codex", "--project", dir]);
    assertEquals(codex.code, 0);
    match(codex.stderr, /trusted by hash/);
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("install --hooks-dir records the platform hook folders in the installed command", async () => {
  const dir = await tempDir("hookbox-install-hooks-dir-");
  try {
    const args = ["install", "--agent", "claude-code", "--project", dir];
    await Deno.mkdir(`${dir}/my hooks`);
    assertEquals(
      await quiet([...args, "--command", "/opt/hookbox", "--hooks-dir", `${dir}/my hooks`]),
      0,
    );
    const settings = JSON.parse(await Deno.readTextFile(`${dir}/.claude/settings.json`));
    assertEquals(
      settings.hooks.PreToolUse[0].hooks[0].command,
      `/opt/hookbox dispatch --agent claude-code --event PreToolUse --hooks-dir '${dir}/my hooks' ` +
        "--daemon",
    );
    assertEquals(await quiet(["uninstall", "--agent", "claude-code", "--project", dir]), 0);
    assertEquals(await Deno.readTextFile(`${dir}/.claude/settings.json`).catch(() => null), null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
