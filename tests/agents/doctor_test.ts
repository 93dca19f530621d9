/**
 * `hookbox doctor`: every installed event run through the exact installed
 * command, with what the agent would get; a broken command or a config the
 * agent ignores is a failure that names itself.
 */
import { deepStrictEqual as assertEquals, match } from "node:assert/strict";
import { main } from "../../packages/cli/main.ts";
import { ROOT, tempDir } from "../_helpers.ts";
import { writeAgentHooks } from "./_agent_hooks.ts";

/** `main(args)` with what it printed on stdout. */
async function doctor(args: string[]): Promise<{ code: number; stdout: string }> {
  const log = console.log;
  const error = console.error;
  const lines: string[] = [];
  console.log = (...parts: unknown[]) => lines.push(parts.join(" "));
  console.error = () => {};
  try {
    return { code: await main(args), stdout: lines.join("\n") };
  } finally {
    console.log = log;
    console.error = error;
  }
}

Deno.test("hookbox doctor runs every installed event through the installed command", async () => {
  const dir = await tempDir("hookbox-doctor-");
  // The installed command calls through the user's daemon: this test's own, gone with `dir`.
  const runtime = Deno.env.get("XDG_RUNTIME_DIR");
  await Deno.mkdir(`${dir}/run`, { mode: 0o700 });
  Deno.env.set("XDG_RUNTIME_DIR", `${dir}/run`);
  try {
    await writeAgentHooks(`${dir}/platform`);
    const command = `${Deno.execPath()} run -A ${ROOT}/packages/cli/main.ts`;
    const install = ["install", "--agent", "gemini-cli", "--project", dir];
    assertEquals(
      (await doctor([...install, "--command", command, "--hooks-dir", `${dir}/platform`])).code,
      0,
    );
    const ok = await doctor(["doctor", "--agent", "gemini-cli", "--project", dir]);
    assertEquals(ok.code, 0, ok.stdout);
    match(ok.stdout, /^BeforeTool: no opinion \(allow\)/m);
    match(ok.stdout, /^SessionStart: answers \{"hookSpecificOutput":\{"additionalContext"/m);
    match(ok.stdout, /^AfterAgent: answers \{"decision":"deny"/m, "the platform stop gate blocks");
    match(ok.stdout, /trusted workspace/);

    // A command that cannot run: every event says so, and doctor fails.
    assertEquals((await doctor([...install, "--command", `${dir}/no-such-hookbox`])).code, 0);
    const broken = await doctor(["doctor", "--agent", "gemini-cli", "--project", dir]);
    assertEquals(broken.code, 1);
    match(
      broken.stdout,
      /^BeforeTool: FAILED: exit 127, which gemini-cli treats as a non-blocking error/m,
    );

    // A config the agent would ignore.
    const file = `${dir}/.gemini/settings.json`;
    await Deno.writeTextFile(file, (await Deno.readTextFile(file)).replace(/\}\s*$/, ",}\n"));
    const ignored = await doctor(["doctor", "--agent", "gemini-cli", "--project", dir]);
    assertEquals(ignored.code, 1);
    match(ignored.stdout, /has a trailing comma; gemini-cli ignores the whole file/);
  } finally {
    if (runtime === undefined) Deno.env.delete("XDG_RUNTIME_DIR");
    else Deno.env.set("XDG_RUNTIME_DIR", runtime);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("hookbox doctor says when nothing is installed", async () => {
  const dir = await tempDir("hookbox-doctor-none-");
  try {
    const out = await doctor(["doctor", "--agent", "claude-code", "--project", dir]);
    assertEquals(out.code, 1);
    match(out.stdout, /no such file; run hookbox install --agent claude-code first/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
