/**
 * A real wrangler for tests (npm `wrangler`, pinned), installed once under
 * `.cache/wrangler` with the npm that installed Deno, or `HOOKBOX_WRANGLER`.
 * Only `deploy --dry-run` is run: nothing leaves the machine.
 */
import { ROOT } from "./_helpers.ts";

export const WRANGLER_VERSION = "4.86.0";
const PREFIX = `${ROOT}/.cache/wrangler`;
const BINARY = `${PREFIX}/node_modules/.bin/wrangler`;

/** Path of the wrangler command, installing it on first use. */
export async function wranglerBinary(): Promise<string> {
  const given = Deno.env.get("HOOKBOX_WRANGLER");
  if (given) return given;
  try {
    await Deno.stat(BINARY);
    return BINARY;
  } catch { /* install below */ }
  await Deno.mkdir(PREFIX, { recursive: true });
  const out = await new Deno.Command("npm", {
    args: [
      "install",
      "--prefix",
      PREFIX,
      "--no-audit",
      "--no-fund",
      `wrangler@${WRANGLER_VERSION}`,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`npm install wrangler: ${new TextDecoder().decode(out.stderr)}`);
  }
  return BINARY;
}
