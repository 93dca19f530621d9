/**
 * Helpers for the tests that run a command form in a real shell, then show it
 * to the built-in shell-guard.
 *
 * @module
 */
import { createExecutor } from "../../packages/hookbox/deno.ts";
import { ROOT, tempDir } from "../_helpers.ts";

/**
 * Runs `form` with `CMD` as `touch ran` under `shell -c` in a fresh folder
 * (holding one file, for globs to match); true when the command ran.
 */
export async function runsInShell(shell: string, form: string): Promise<boolean> {
  const dir = await tempDir("hookbox-real-shell-");
  try {
    await Deno.writeTextFile(`${dir}/file`, "");
    await new Deno.Command(shell, {
      args: ["-c", form.replaceAll("CMD", "touch ran")],
      cwd: dir,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).output();
    return await Deno.stat(`${dir}/ran`).then(() => true, () => false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** An executor with the built-in shell-guard alone. */
export const shellGuard = () =>
  createExecutor({ platformDirs: [`${ROOT}/hooks/shell-guard`], userDir: null, projectDir: null });

/** A Bash call of `command` in a project folder, as an agent's pre-tool-call event. */
export const shellCall = (command: string) => ({
  event_type: "pre-tool-call" as const,
  session_id: "s",
  work_dir: "/home/user/project",
  tool_name: "Bash",
  tool_input: { command },
});
