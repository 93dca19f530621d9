/**
 * `hookbox validate [DIR...]`: checks hook folders (HOOK.md, entry, and for a
 * `.wasm` entry the plugin itself, loaded as the runtime would) and prints
 * every problem.
 */
import { absolute, defaultUserDir, denoFs } from "../host-deno/fs.ts";
import { type HookProblem, scanPath } from "../core/hook/discover.ts";
import { EXIT } from "./_io.ts";
import { checkPlugin } from "./_plugin_check.ts";

/** Formats a problem as `CODE path [field F]: message`. */
export function problemLine(p: HookProblem): string {
  return `${p.code} ${p.path}${p.field ? ` field ${p.field}` : ""}: ${p.message}`;
}

/** Runs the command; returns the exit code. */
export async function validateCommand(args: string[]): Promise<number> {
  const explicit = args.length > 0;
  const dirs = explicit
    ? args.map(absolute)
    : [defaultUserDir(), absolute(".agents/hooks")].filter((d): d is string => d !== null);
  let problems = 0;
  let hooks = 0;
  for (const dir of dirs) {
    if (explicit && (await denoFs.stat(dir)) === null) {
      console.log(
        problemLine({ code: "HOOK_DIR_UNREADABLE", path: dir, message: "no such folder" }),
      );
      problems++;
      continue;
    }
    const found = await scanPath(denoFs, dir, "project");
    for (const hook of found.hooks) {
      const problem = await checkPlugin(denoFs, hook);
      if (problem === null) {
        console.log(`ok ${hook.name} ${hook.dir} (${hook.entry.runtime})`);
        hooks++;
      } else {
        found.problems.push(problem);
      }
    }
    for (const p of found.problems) console.log(problemLine(p));
    problems += found.problems.length;
  }
  console.log(`${hooks} hook(s) valid, ${problems} problem(s)`);
  return problems > 0 ? EXIT.bad : EXIT.allow;
}
