/**
 * Commands from npm packages that tests run for real (workerd, wrangler, the
 * agent CLIs), installed with the npm that installed Deno.
 */
import { ROOT } from "./_helpers.ts";

/** Installs `specs` (`name@version`) under `prefix`; throws with npm's stderr on failure. */
export async function npmInstall(prefix: string, specs: readonly string[]): Promise<void> {
  await Deno.mkdir(prefix, { recursive: true });
  const out = await new Deno.Command("npm", {
    args: ["install", "--prefix", prefix, "--no-audit", "--no-fund", ...specs],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`npm install ${specs.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
}

/**
 * Path of `binary` (relative to `.cache/<folder>`) from the npm package
 * `spec`, installed there on first use, or the path in environment variable
 * `env` when it is set.
 */
export async function npmTool(
  tool: { folder: string; spec: string; binary: string; env: string },
): Promise<string> {
  const given = Deno.env.get(tool.env);
  if (given) return given;
  const prefix = `${ROOT}/.cache/${tool.folder}`;
  const binary = `${prefix}/${tool.binary}`;
  try {
    await Deno.stat(binary);
    return binary;
  } catch { /* install below */ }
  await npmInstall(prefix, [tool.spec]);
  return binary;
}
