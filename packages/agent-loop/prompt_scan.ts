/**
 * `scanPromptHooks` (seed 003): reads `<skillsDir>/<skill>/hooks/hooks.json`
 * and the `.md` files it names for each enabled skill. Everything read is
 * hostile until checked: skill names are plain folder names, files are
 * size-capped and must stay inside the skill's `hooks/` folder (symbolic
 * links resolved), counts are bounded and unknown fields refused.
 *
 * @module
 */
import { z } from "zod";
import { HookboxError } from "../core/errors.ts";
import { confined } from "../core/hook/files.ts";
import { type HostFs, joinPath } from "../core/host.ts";
import { PROMPT_TIMINGS, type PromptHookInfo } from "./prompt_hooks.ts";

/** Largest `hooks.json` read. */
export const MAX_PROMPT_CONFIG_BYTES = 64 * 1024;
/** Largest prompt `.md` read. */
export const MAX_PROMPT_BYTES = 64 * 1024;
/** Most prompt hooks one skill declares. */
export const MAX_PROMPT_HOOKS_PER_SKILL = 64;
/** Most skills one scan takes. */
export const MAX_SKILLS = 1000;

const SKILL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

const hookSchema = z.strictObject({
  name: z.string().min(1).max(128),
  file: z.string().regex(/^[^/\\.][^/\\]{0,254}\.md$/, "must be a .md file name inside hooks/"),
  timing: z.enum(PROMPT_TIMINGS),
  role: z.enum(["system", "user"]),
  persistent: z.boolean(),
  tool_filter: z.array(z.string().min(1).max(256)).max(256).optional(),
});
const configSchema = z.strictObject({
  hooks: z.array(hookSchema).max(MAX_PROMPT_HOOKS_PER_SKILL),
});

/**
 * The prompt hooks of `enabledSkills`, in the order the skills are given and,
 * within a skill, the order of its `hooks.json`. A skill with no
 * `hooks/hooks.json` has none; a malformed one throws `PROMPT_HOOK_INVALID`
 * naming the file and field (a skill is never half-loaded).
 *
 * @example
 * ```ts ignore
 * const hooks = await scanPromptHooks("skills", ["research"], denoFs);
 * ```
 */
export async function scanPromptHooks(
  skillsDir: string,
  enabledSkills: readonly string[],
  fs: HostFs,
): Promise<PromptHookInfo[]> {
  if (enabledSkills.length > MAX_SKILLS) {
    throw new TypeError(`enabledSkills: at most ${MAX_SKILLS} skills, got ${enabledSkills.length}`);
  }
  const found: PromptHookInfo[] = [];
  for (const skill of enabledSkills) found.push(...await scanSkill(skillsDir, skill, fs));
  return found;
}

async function scanSkill(skillsDir: string, skill: string, fs: HostFs): Promise<PromptHookInfo[]> {
  if (!SKILL_NAME.test(skill) || skill === "." || skill === "..") {
    throw invalid(
      `skill name "${skill.slice(0, 140)}" is not a plain folder name`,
      skillsDir,
      "skill",
    );
  }
  const hooksDir = joinPath(skillsDir, skill, "hooks");
  const configPath = joinPath(hooksDir, "hooks.json");
  if ((await fs.stat(configPath))?.kind !== "file") return [];
  await confined(fs, skillsDir, hooksDir);
  await confined(fs, hooksDir, configPath);
  const text = await fs.readTextFile(configPath, MAX_PROMPT_CONFIG_BYTES);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw invalid(`not JSON: ${(error as Error).message}`, configPath, "");
  }
  const config = configSchema.safeParse(json);
  if (!config.success) {
    const issue = config.error.issues[0]!;
    throw invalid(issue.message, configPath, issue.path.join("."));
  }
  const names = new Set<string>();
  const hooks: PromptHookInfo[] = [];
  for (const [i, hook] of config.data.hooks.entries()) {
    if (names.has(hook.name)) {
      throw invalid(`duplicate hook name "${hook.name}"`, configPath, `hooks.${i}.name`);
    }
    names.add(hook.name);
    const path = joinPath(hooksDir, hook.file);
    if ((await fs.stat(path))?.kind !== "file") {
      throw invalid(`${hook.file} does not exist`, configPath, `hooks.${i}.file`);
    }
    await confined(fs, hooksDir, path);
    hooks.push({
      skill,
      name: hook.name,
      file: hook.file,
      timing: hook.timing,
      role: hook.role,
      persistent: hook.persistent,
      toolFilter: hook.tool_filter ?? null,
      content: (await fs.readTextFile(path, MAX_PROMPT_BYTES)).trim(),
    });
  }
  return hooks;
}

function invalid(message: string, path: string, field: string): HookboxError {
  return new HookboxError("PROMPT_HOOK_INVALID", message, { path, field });
}
