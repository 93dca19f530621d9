/** `hookbox list`: the hooks that would apply, in dispatch order, per event. */
import { parseArgs } from "node:util";
import { parseOptions } from "./commands.ts";
import { absolute } from "../host-deno/fs.ts";
import { compareHooks } from "../core/dispatch/select.ts";
import { createExecutor } from "../deno/executor.ts";
import { EVENT_TYPES } from "../core/schema/event_types.ts";
import { EXIT } from "./_io.ts";
import { problemLine } from "./validate.ts";

/** Runs the command; returns the exit code. */
export async function listCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: parseOptions("list"),
    strict: true,
  });
  const workDir = absolute(values["work-dir"] ?? Deno.cwd());
  // A folder named on the command line that is not there is a mistake, not "no hooks".
  for (const dir of [...values["hooks-dir"], ...(values["work-dir"] ? [workDir] : [])]) {
    if ((await Deno.stat(absolute(dir)).catch(() => null))?.isDirectory !== true) {
      console.error(`hookbox list: ${absolute(dir)}: no such folder`);
      return EXIT.bad;
    }
  }
  const executor = createExecutor({ platformDirs: values["hooks-dir"], workDir });
  const hooks = await executor.hooks(workDir);
  const problems = await executor.problems(workDir);
  const byEvent = EVENT_TYPES.map((type) => ({
    event_type: type,
    hooks: hooks.filter((h) => h.manifest.trigger.includes(type)).sort(compareHooks).map((h) => ({
      name: h.name,
      level: h.level,
      priority: h.manifest.priority,
      runtime: h.entry.runtime,
      async: h.manifest.async,
      on_error: h.manifest.on_error,
      matcher: h.manifest.matcher ?? null,
      dir: h.dir,
      replaces: h.replaces ?? null,
    })),
  })).filter((e) => e.hooks.length > 0);
  if (values.json) {
    console.log(JSON.stringify({ events: byEvent, problems }, null, 2));
  } else {
    for (const { event_type, hooks } of byEvent) {
      console.log(event_type);
      for (const h of hooks) {
        const matcher = h.matcher
          ? ` matcher ${Object.entries(h.matcher).map(([k, v]) => `${k}=${v}`).join(" ")}`
          : "";
        console.log(
          `  ${String(h.priority).padStart(4)} ${h.level.padEnd(8)} ${h.name} [${h.runtime}${
            h.async ? ", async" : ""
          }${h.on_error === "closed" ? ", on_error closed" : ""}]${matcher}${
            h.replaces ? ` (replaces the user hook in ${h.replaces})` : ""
          }`,
        );
      }
    }
    if (byEvent.length === 0) console.log("no hooks found");
    for (const p of problems) console.error(`warning: ${problemLine(p)}`);
  }
  await executor.close();
  return EXIT.allow;
}
