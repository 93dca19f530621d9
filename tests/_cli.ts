/** Runs the real CLI (`deno run -A packages/cli/main.ts`) as a subprocess for tests. */
import { ROOT, withoutDenoNotices } from "./_helpers.ts";

/** What one CLI run printed and returned. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `hookbox ...args` in `cwd` with `env` (plus NO_COLOR) and `stdin`. */
export async function runCli(
  args: string[],
  options: { cwd: string; env?: Record<string, string>; stdin?: string },
): Promise<CliRun> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}/packages/cli/main.ts`, ...args],
    cwd: options.cwd,
    env: { NO_COLOR: "1", ...options.env },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(options.stdin ?? ""));
  await writer.close();
  const out = await child.output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return {
    code: out.code,
    stdout: decode(out.stdout),
    stderr: withoutDenoNotices(decode(out.stderr)),
  };
}
