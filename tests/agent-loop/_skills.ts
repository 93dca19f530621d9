/**
 * A skill folder for the seed-003 tests and the example agent: one prompt
 * hook per timing, a tool-filtered one that never matches, and a persistent
 * one.
 */

/** The hooks.json entries, in order, with their texts. */
export const DEMO_HOOKS = [
  { name: "aui", timing: "after_user_input", role: "system", persistent: false, text: "AUI" },
  { name: "bp", timing: "before_planning", role: "system", persistent: false, text: "BP" },
  { name: "bfa", timing: "before_first_agent", role: "system", persistent: false, text: "BFA" },
  { name: "bea", timing: "before_each_agent", role: "system", persistent: false, text: "BEA" },
  {
    name: "remember",
    timing: "before_each_agent",
    role: "user",
    persistent: true,
    text: "PERSIST",
  },
  {
    name: "atc",
    timing: "after_tool_call",
    role: "system",
    persistent: false,
    text: "ATC",
    tool_filter: ["A", "B"],
  },
  {
    name: "atc-c",
    timing: "after_tool_call",
    role: "system",
    persistent: false,
    text: "ATC-C",
    tool_filter: ["C"],
  },
] as const;

/** Writes skill `name` with {@linkcode DEMO_HOOKS} under `skillsDir`. */
export async function writeDemoSkill(skillsDir: string, name = "demo"): Promise<void> {
  const dir = `${skillsDir}/${name}/hooks`;
  await Deno.mkdir(dir, { recursive: true });
  const hooks = DEMO_HOOKS.map(({ text: _text, ...hook }) => ({
    ...hook,
    file: `${hook.name}.md`,
  }));
  await Deno.writeTextFile(`${dir}/hooks.json`, JSON.stringify({ hooks }, null, 2));
  for (const hook of DEMO_HOOKS) {
    await Deno.writeTextFile(`${dir}/${hook.name}.md`, `${hook.text}\n`);
  }
}
