/** `hookbox dispatch`: one event JSON on stdin, the result JSON on stdout. */
import { parseArgs } from "node:util";
import { absolute } from "../adapters/deno/fs.ts";
import { parseEventObject } from "../schema/event.ts";
import type { ExecutorOptions } from "../mod.ts";
import { createExecutor } from "../mod.ts";
import { EXIT, readStdin, UsageError } from "./_io.ts";
import { problemLine } from "./validate.ts";

export const DISPATCH_USAGE =
  "hookbox dispatch [--event TYPE] [--work-dir DIR] [--allow-subprocess] [--hooks-dir DIR]... [--tenant ID]";

/** Runs the command; returns the exit code. */
export async function dispatchCommand(
  args: string[],
  extra: ExecutorOptions = {},
): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      event: { type: "string" },
      "work-dir": { type: "string" },
      "allow-subprocess": { type: "boolean", default: false },
      "hooks-dir": { type: "string", multiple: true, default: [] },
      tenant: { type: "string" },
    },
    strict: true,
    allowPositionals: false,
  });
  const event = parseStdinEvent(await readStdin());
  if (values.event !== undefined) event.event_type = values.event;
  const workDir = absolute(
    values["work-dir"] ?? (typeof event.work_dir === "string" ? event.work_dir : Deno.cwd()),
  );
  event.work_dir = workDir;
  const executor = createExecutor({
    ...extra,
    platformDirs: values["hooks-dir"],
    workDir,
    allowSubprocess: values["allow-subprocess"],
  });
  try {
    const result = await executor.dispatch(event, values.tenant ? { tenantId: values.tenant } : {});
    console.log(JSON.stringify(result, null, 2));
    if (result.decision === "block") {
      console.error(result.reason ?? "blocked");
      return EXIT.block;
    }
    // Skipped hook folders are never silent; on a block stderr carries only the reason.
    for (const p of await executor.problems(workDir)) {
      console.error(`hookbox: warning: ${problemLine(p)}`);
    }
    return EXIT.allow;
  } finally {
    await executor.close();
  }
}

function parseStdinEvent(text: string): Record<string, unknown> {
  if (text.trim() === "") throw new UsageError("no event JSON on stdin");
  return parseEventObject(text);
}
