/** The executor of one `hookbox dispatch` (plain or `--agent`). */
import { absolute } from "../host-deno/fs.ts";
import { createExecutor, type ExecutorOptions } from "../deno/executor.ts";
import { callerCwd } from "./_io.ts";
import { BUILD_BUDGET_MS } from "../compile/mod.ts";

type Executor = ReturnType<typeof createExecutor>;

/** How a long-lived process (the daemon) makes a call's executor; null: `createExecutor`. */
let maker: ((options: ExecutorOptions) => Executor) | null = null;

/** Makes `executorFor` make its executors with `make` (null: `createExecutor` again). */
export function useExecutorMaker(make: ((options: ExecutorOptions) => Executor) | null): void {
  maker = make;
}

/** The flags that shape the executor of one `dispatch`. */
export interface DispatchFlags {
  "work-dir"?: string | undefined;
  "allow-subprocess"?: boolean | undefined;
  "hooks-dir"?: string[] | undefined;
  tenant?: string | undefined;
}

/**
 * Wall time the hooks of one event may take together in a dispatch, ms
 * (`Policy.eventTimeoutMs`), building the hooks not built yet included (a
 * hook still being built then ends as `TIMEOUT`): a call answers within
 * about 15 s after its discovery, under the shortest agent hook timeout
 * (Copilot's 30 s).
 */
export const EVENT_TIME_MS = 15_000;

/**
 * The hooks' deadline for this process's call, ms: `EVENT_TIME_MS`, or less
 * when the call was meant for the daemon and the daemon was late
 * (`HOOKBOX_DAEMON_DEADLINE`, the epoch ms by which its hooks must end:
 * `daemon_client.ts`). At least 1: past it, every hook ends as `TIMEOUT`
 * without running, and a closed guard blocks.
 */
export function eventTimeMs(deadline = Deno.env.get("HOOKBOX_DAEMON_DEADLINE")): number {
  const by = Number(deadline);
  if (!deadline || !Number.isFinite(by)) return EVENT_TIME_MS;
  return Math.max(1, Math.min(EVENT_TIME_MS, Math.floor(by - Date.now())));
}

/**
 * The most plugin bytes one `dispatch` loads, MiB, unless
 * `$HOOKBOX_LOADED_PLUGIN_MB` says otherwise: past it a hook whose plugin is
 * not loaded yet ends as `limit` without loading, `on_error` applied (a
 * closed guard blocks). Plugins let go are not collected before a one-shot
 * process ends, so a repository's thousand 4 MiB plugins would otherwise
 * cost gigabytes in one hook call; 256 MiB is about 200 JS hooks or 60
 * plugins at the 4 MiB `moduleKb` cap (a call's peak about 600 MB).
 */
export const LOADED_PLUGIN_MB = 256;

/**
 * `LOADED_PLUGIN_MB`, or `$HOOKBOX_LOADED_PLUGIN_MB` when that is a whole
 * number from 1 to 65536; another value is one line on stderr and the
 * default.
 */
export function loadedPluginMb(value = Deno.env.get("HOOKBOX_LOADED_PLUGIN_MB")): number {
  if (value === undefined || value === "") return LOADED_PLUGIN_MB;
  const mb = Number(value);
  if (/^\d+$/.test(value) && mb >= 1 && mb <= 65536) return mb;
  console.error(
    `hookbox: $HOOKBOX_LOADED_PLUGIN_MB is ${
      JSON.stringify(value.slice(0, 40))
    }, not a whole number of MiB from 1 to 65536: using ${LOADED_PLUGIN_MB}`,
  );
  return LOADED_PLUGIN_MB;
}

/**
 * The building time of a process that answers agents, ms:
 * `BUILD_BUDGET_MS` (12 s, refilled as much a minute), or `$HOOKBOX_BUILD_MS`
 * when that is a whole number from 0 to 600000 (0: nothing is built inside a
 * call, every build goes on in the background); another value is one line
 * on stderr and the default.
 */
export function buildMs(value = Deno.env.get("HOOKBOX_BUILD_MS")): number {
  if (value === undefined || value === "") return BUILD_BUDGET_MS;
  const ms = Number(value);
  if (/^\d+$/.test(value) && ms <= 600_000) return ms;
  console.error(
    `hookbox: $HOOKBOX_BUILD_MS is ${
      JSON.stringify(value.slice(0, 40))
    }, not a whole number of ms from 0 to 600000: using ${BUILD_BUDGET_MS}`,
  );
  return BUILD_BUDGET_MS;
}

/**
 * The executor for `event`: its work dir is `--work-dir`, else the event's,
 * else the current directory (written back into the event).
 */
export function executorFor(
  event: Record<string, unknown>,
  values: DispatchFlags,
  extra: ExecutorOptions,
): { executor: Executor; workDir: string } {
  const given = values["work-dir"] ??
    (typeof event.work_dir === "string" ? event.work_dir : callerCwd());
  // Relative to the caller's directory (a daemon's own is not the caller's).
  const workDir = absolute(given.startsWith("/") ? given : `${callerCwd()}/${given}`);
  event.work_dir = workDir;
  const options: ExecutorOptions = {
    // One process per event: discovery is remembered on disk between them.
    scanCache: true,
    // Run with V8's baseline compiler only (dist/cli/hookbox): nothing is tiered up.
    tuneWasmTiering: false,
    // One event per process: a warm instance would never be called again.
    warmBytes: 0,
    // Each plugin runs once: kept only while the event may still need it, and never gigabytes
    // of a repository's thousand big plugins.
    keptPluginBytes: 128 * 1024 * 1024,
    // Nor, in all, more than this process can hold: plugins let go stay until it ends.
    loadedPluginBytes: loadedPluginMb() * 1024 * 1024,
    ...extra,
    // An agent lets the action through once its hook call times out (Copilot after 30 s):
    // the hooks of an event answer within 15 s, whatever a repository's hooks do.
    policy: { eventTimeoutMs: eventTimeMs(), ...extra.policy },
    platformDirs: (values["hooks-dir"] ?? []).map((d) =>
      d.startsWith("/") ? d : `${callerCwd()}/${d}`
    ),
    workDir,
    allowSubprocess: values["allow-subprocess"] ?? false,
  };
  return { executor: (maker ?? createExecutor)(options), workDir };
}
