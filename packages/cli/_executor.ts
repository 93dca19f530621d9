/** The executor of one `hookbox dispatch` (plain or `--agent`). */
import { absolute } from "../host-deno/fs.ts";
import { createExecutor, type ExecutorOptions } from "../deno/executor.ts";

/** The flags that shape the executor of one `dispatch`. */
export interface DispatchFlags {
  "work-dir"?: string | undefined;
  "allow-subprocess"?: boolean | undefined;
  "hooks-dir"?: string[] | undefined;
  tenant?: string | undefined;
}

/**
 * The executor for `event`: its work dir is `--work-dir`, else the event's,
 * else the current directory (written back into the event).
 */
export function executorFor(
  event: Record<string, unknown>,
  values: DispatchFlags,
  extra: ExecutorOptions,
): { executor: ReturnType<typeof createExecutor>; workDir: string } {
  const workDir = absolute(
    values["work-dir"] ?? (typeof event.work_dir === "string" ? event.work_dir : Deno.cwd()),
  );
  event.work_dir = workDir;
  const executor = createExecutor({
    // One process per event: discovery is remembered on disk between them.
    scanCache: true,
    // Run with V8's baseline compiler only (dist/cli/hookbox): nothing is tiered up.
    tuneWasmTiering: false,
    // One event per process: a warm instance would never be called again.
    warmBytes: 0,
    ...extra,
    platformDirs: values["hooks-dir"] ?? [],
    workDir,
    allowSubprocess: values["allow-subprocess"] ?? false,
  });
  return { executor, workDir };
}
