/**
 * A real wrangler for tests (npm `wrangler`, pinned), installed once under
 * `.cache/wrangler`, or `HOOKBOX_WRANGLER`. Only `deploy --dry-run` is run:
 * nothing leaves the machine.
 */
import { npmTool } from "./_npm_tool.ts";

export const WRANGLER_VERSION = "4.86.0";

/** Path of the wrangler command, installing it on first use. */
export function wranglerBinary(): Promise<string> {
  return npmTool({
    folder: "wrangler",
    spec: `wrangler@${WRANGLER_VERSION}`,
    binary: "node_modules/.bin/wrangler",
    env: "HOOKBOX_WRANGLER",
  });
}
