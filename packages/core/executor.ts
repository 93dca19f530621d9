/**
 * The executor core: discovery once per folder, then dispatch. Web APIs only —
 * files come through a {@linkcode HostFs}, runtimes are passed in.
 *
 * @module
 */
import {
  type AsyncResultHandler,
  dispatchEvent,
  type DispatchOptions,
} from "./dispatch/dispatch.ts";
import type { DispatchResult } from "./dispatch/result.ts";
import { type Discovery, type HookProblem, mergeLevels, scanPath } from "./hook/discover.ts";
import type { HookDefinition, HookLevel } from "./hook/types.ts";
import { type HostFs, joinPath } from "./host.ts";
import { type Policy, resolvePolicy } from "./policy.ts";
import type { Runtime, RuntimeKind } from "./runtime/types.ts";
import { parseEventAsync } from "./schema/event.ts";

/** Everything the core executor needs, with no defaults taken from the machine. */
export interface CoreConfig {
  /** File-system capabilities for discovery and plugin loading. */
  fs: HostFs;
  /** Operator folders of platform hooks. @default [] */
  platformDirs?: string[];
  /** User hook folder, or null for none. @default null */
  userDir?: string | null;
  /** Fixed project hook folder; when absent it is `<work_dir>/.agents/hooks` of each event. */
  projectDir?: string | null;
  /** Work dir for events that name none. */
  defaultWorkDir?: string;
  /** The runtimes hooks run on, by kind. */
  runtimes: Partial<Record<RuntimeKind, Runtime>>;
  /** Policy over {@linkcode DEFAULT_POLICY}. */
  policy?: Partial<Policy>;
  /** Receives each async hook's record when it finishes (see {@linkcode AsyncResultHandler}). */
  onAsyncResult?: AsyncResultHandler;
  /**
   * Scans one folder of hooks (a cache in front of discovery, say); it must
   * answer as {@linkcode scanPath} on `fs` would. @default scanPath
   */
  scan?: (dir: string, level: HookLevel) => Promise<Discovery>;
}

/** Per-call options of {@linkcode Executor.dispatch}. */
export interface DispatchCallOptions {
  /** Tenant the event belongs to. @default event.tenant_id, else "default" */
  tenantId?: string;
  /** Policy for this call, over the executor's. */
  policy?: Partial<Policy>;
}

/** A running executor. */
export interface Executor {
  /** Validates `event` (throws `EVENT_INVALID`) and runs the hooks that fit it. */
  dispatch(event: unknown, options?: DispatchCallOptions): Promise<DispatchResult>;
  /** The hooks that apply for `workDir`, after override rules. */
  hooks(workDir?: string): Promise<HookDefinition[]>;
  /** Hook folders that were skipped, with code, path and field. */
  problems(workDir?: string): Promise<HookProblem[]>;
  /** Waits for async hooks, then releases runtimes. */
  close(): Promise<void>;
}

/** Project folders whose merged hook list is kept (events name their own work dirs). */
const MAX_MERGED = 256;

/** Builds an executor from explicit capabilities. */
export function createCoreExecutor(config: CoreConfig): Executor {
  const policy = resolvePolicy(config.policy);
  const scans = new Map<string, Promise<Discovery>>();
  const scanFolder = config.scan ?? ((dir, level) => scanPath(config.fs, dir, level));
  // Platform and user folders are few and fixed: scanned once. A project
  // folder's scan lives only in its merged list below, so the number kept is
  // bounded however many work dirs events name.
  const scan = (dir: string, level: "platform" | "user" | "project") => {
    if (level === "project") return scanFolder(dir, level);
    const key = `${level}:${dir}`;
    let found = scans.get(key);
    if (!found) scans.set(key, found = scanFolder(dir, level));
    return found;
  };
  const base = Promise.all([
    ...(config.platformDirs ?? []).map((d) => scan(d, "platform")),
    ...(config.userDir ? [scan(config.userDir, "user")] : []),
  ]);
  // The scan starts now, before any call awaits it: a failure must reach the
  // calls that need it, never the process as an unhandled rejection.
  base.catch(() => {});
  // Folders are scanned once, so their merge is made once per project folder too.
  const merged = new Map<string | null, Promise<Discovery>>();
  const discover = (workDir: string | undefined): Promise<Discovery> => {
    const projectDir = config.projectDir !== undefined
      ? config.projectDir
      : workDir
      ? joinPath(workDir, ".agents/hooks")
      : null;
    let found = merged.get(projectDir);
    if (!found) {
      found = (async () =>
        mergeLevels([...await base, ...(projectDir ? [await scan(projectDir, "project")] : [])]))();
      if (merged.size >= MAX_MERGED) {
        merged.delete(merged.keys().next().value!);
      }
      merged.set(projectDir, found);
    }
    return found;
  };
  const pending = new Set<Promise<unknown>>();
  const abort = new AbortController();
  const track = (p: Promise<unknown>) => {
    pending.add(p);
    const done = () => pending.delete(p);
    p.then(done, done);
  };

  return {
    async dispatch(input, options = {}) {
      const event = await parseEventAsync(input);
      const workDir = event.work_dir ?? config.defaultWorkDir;
      const callPolicy = options.policy ? resolvePolicy({ ...policy, ...options.policy }) : policy;
      const { hooks } = await discover(workDir);
      const enabled = hooks.filter((h) =>
        h.level === "platform" || !callPolicy.disabledHooks.includes(h.name)
      );
      const dispatchOptions: DispatchOptions = {
        runtimes: config.runtimes,
        policy: callPolicy,
        tenantId: options.tenantId ?? event.tenant_id ?? "default",
        env: {},
        signal: abort.signal,
        track,
        ...(config.onAsyncResult ? { onAsyncResult: config.onAsyncResult } : {}),
      };
      return await dispatchEvent(
        enabled,
        workDir ? { ...event, work_dir: workDir } : event,
        dispatchOptions,
      );
    },
    async hooks(workDir) {
      return (await discover(workDir ?? config.defaultWorkDir)).hooks;
    },
    async problems(workDir) {
      return (await discover(workDir ?? config.defaultWorkDir)).problems;
    },
    async close() {
      // Nothing of the executor's reads a folder after close: the first scan ends first.
      await Promise.allSettled([base, ...pending]);
      abort.abort();
      await Promise.all(Object.values(config.runtimes).map((r) => r?.close?.()));
    },
  };
}
