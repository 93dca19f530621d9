/**
 * The Deno form of the agent API's file-reading parts.
 *
 * @module
 */
import { scanPromptHooks as scanWith } from "../agent-loop/prompt_scan.ts";
import type { PromptHookInfo } from "../agent-loop/prompt_hooks.ts";
import type { HostFs } from "../core/host.ts";
import { denoFs } from "../host-deno/fs.ts";

/**
 * The prompt hooks of `enabledSkills` under `skillsDir` (seed 003), read from
 * the local file system unless another `fs` is given.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { scanPromptHooks } from "./agent.ts";
 * assert.deepEqual(await scanPromptHooks("/nonexistent", ["none"]), []);
 * ```
 */
export function scanPromptHooks(
  skillsDir: string,
  enabledSkills: readonly string[],
  fs: HostFs = denoFs,
): Promise<PromptHookInfo[]> {
  return scanWith(skillsDir, enabledSkills, fs);
}
