/**
 * The hook folder every adapter test runs: a guard that blocks `rm -rf`, a
 * rewrite for commands naming `rewrite-me`, a prompt hook adding context at
 * session start and on each prompt, and a stop gate that blocks stopping.
 */
import { hookMd } from "../_helpers.ts";
import { corpus } from "../runtime-wasm/_corpus.ts";

/** What the guard says when it blocks. */
export const GUARD_REASON = "rm -rf is not allowed";
/** The prompt hook's body. */
export const CONTEXT = "House rule: run the tests before you commit.";
/** What the stop gate says. */
export const STOP_REASON = "blocked by policy";

/** Writes the hooks into `dir` (created). */
export async function writeAgentHooks(dir: string): Promise<void> {
  const hook = async (
    name: string,
    frontmatter: Record<string, unknown>,
    plugin?: string,
    body = "",
  ) => {
    await Deno.mkdir(`${dir}/${name}`, { recursive: true });
    await Deno.writeTextFile(`${dir}/${name}/HOOK.md`, hookMd({ name, ...frontmatter }, body));
    if (plugin) await Deno.writeFile(`${dir}/${name}/plugin.wasm`, await corpus(plugin));
  };
  await hook("guard", { trigger: "pre-tool-call", priority: 500 }, "guard_wasi");
  await hook(
    "rewrite",
    { trigger: "pre-tool-call", matcher: { pattern: "rewrite-me" }, priority: 100 },
    "rewrite_wasi",
  );
  await hook(
    "rules",
    { trigger: ["pre-session", "pre-agent-turn"], inject: { role: "system" } },
    undefined,
    CONTEXT,
  );
  await hook("gate", { trigger: "pre-agent-turn-stop" }, "block_wasi");
}

/** Claude Code's PreToolUse payload for a Bash `command` run in `cwd`. */
export function claudeBash(command: string, cwd: string): string {
  return JSON.stringify({
    session_id: "s1",
    cwd,
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command },
    tool_use_id: "t1",
  });
}

/**
 * Writes into `root` (created) the `rm -rf` guard as `guard`, closed and on
 * the tools `tool` matches only: a payload that hides its tool name from
 * hookbox would pass it by.
 */
export async function writeToolGuard(root: string, tool: string): Promise<void> {
  await Deno.mkdir(`${root}/guard`, { recursive: true });
  await Deno.writeTextFile(
    `${root}/guard/HOOK.md`,
    hookMd({ name: "guard", trigger: "pre-tool-call", on_error: "closed", matcher: { tool } }),
  );
  await Deno.writeFile(`${root}/guard/plugin.wasm`, await corpus("guard_wasi"));
}
