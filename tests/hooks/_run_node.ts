/**
 * Runs a built-in hook with `node` as a subprocess (the built-in hooks are
 * function-style: `tests/fixtures/js/_function_host.mjs` hands them the event).
 *
 * @module
 */

/** What a hook run produced. */
export interface HookRun {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Path of `hooks/<hook>/scripts/run.mjs` (a function-style hook) in this repository. */
export function scriptPath(hook: string): string {
  return new URL(`../../hooks/${hook}/scripts/run.mjs`, import.meta.url).pathname;
}

/** The function-style protocol for `node` (the event from stdin to the default export). */
const FUNCTION_HOST = new URL("../fixtures/js/_function_host.mjs", import.meta.url).pathname;

/** Runs the function-style hook `hooks/<hook>/scripts/run.mjs` under `node` with `stdin`. */
export async function runNode(hook: string, stdin: string): Promise<HookRun> {
  const child = new Deno.Command("node", {
    args: [FUNCTION_HOST, scriptPath(hook)],
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
