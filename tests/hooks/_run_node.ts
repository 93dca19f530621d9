/**
 * Runs a built-in hook script with `node` as a subprocess.
 *
 * @module
 */

/** What a hook run produced. */
export interface HookRun {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Path of `hooks/<hook>/scripts/run.js` in this repository. */
export function scriptPath(hook: string): string {
  return new URL(`../../hooks/${hook}/scripts/run.js`, import.meta.url).pathname;
}

/** Runs `hooks/<hook>/scripts/run.js` under `node` with `stdin`. */
export async function runNode(hook: string, stdin: string): Promise<HookRun> {
  const child = new Deno.Command("node", {
    args: [scriptPath(hook)],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
    clearEnv: true,
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(stdin));
  await writer.close();
  const { code, stdout, stderr } = await child.output();
  const decoder = new TextDecoder();
  return { exitCode: code, stdout: decoder.decode(stdout), stderr: decoder.decode(stderr) };
}
