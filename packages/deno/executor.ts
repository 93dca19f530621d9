/**
 * `createExecutor`: the executor on this machine (Deno), with its file
 * system, subprocesses, compilers and caches. Re-exported by `packages/hookbox/deno.ts`;
 * the one-shot CLI imports it from here, so a hook command does not load
 * the in-process agent API.
 *
 * @module
 */
import { absolute, defaultUserDir, denoFs } from "../host-deno/fs.ts";
import { createSubprocessRuntime } from "./subprocess.ts";
import { createCoreExecutor, type Executor } from "../core/executor.ts";
import type { AsyncResultHandler } from "../core/dispatch/dispatch.ts";
import type { Policy } from "../core/policy.ts";
import { createPromptRuntime } from "../core/runtime/prompt.ts";
import { createWasmRuntime } from "../runtime-wasm/mod.ts";
import { cachedPluginId, compileHook, defaultCacheDir } from "../compile/mod.ts";
import { preparedFromDiskCache } from "./prepared_cache.ts";
import { cachedScan } from "./scan_cache.ts";
import { tuneWasmTiering } from "./wasm_tiering.ts";
import { scanPath } from "../core/hook/discover.ts";
import type { Runtime, RuntimeKind } from "../core/runtime/types.ts";
import type { HookDefinition } from "../core/hook/types.ts";

/** Options of {@linkcode createExecutor}. */
export interface ExecutorOptions {
  /** Operator folders of platform hooks (can't be replaced or disabled). @default [] */
  platformDirs?: string[];
  /** User hook folder; null for none. @default $XDG_CONFIG_HOME/agents/hooks or ~/.config/agents/hooks */
  userDir?: string | null;
  /** Project hook folder; null for none. @default <work_dir>/.agents/hooks of each event */
  projectDir?: string | null;
  /** Work dir for events that carry none. @default the current directory */
  workDir?: string;
  /** Let hooks run as host subprocesses. @default false */
  allowSubprocess?: boolean;
  /** Further policy (limits ceilings, disabled hooks). @default DEFAULT_POLICY */
  policy?: Partial<Policy>;
  /**
   * Receives each async hook's record when it finishes; may return a promise,
   * which `close()` waits for. A throw or rejection is reported on stderr.
   */
  onAsyncResult?: AsyncResultHandler;
  /** Where compiled JS/TS/AssemblyScript plugins are cached. @default $XDG_CACHE_HOME/hookbox */
  cacheDir?: string;
  /**
   * Cap on the bytes idle warm WebAssembly instances hold; 0 keeps none, and
   * warm hooks then run each call on a fresh instance (the CLI's one-shot
   * `dispatch` sets it: it never calls a hook twice). @default 256 MiB
   */
  warmBytes?: number;
  /**
   * Cap on the bytes of WebAssembly plugins kept loaded for later calls
   * (`createWasmRuntime({ keptPluginBytes })`; the one-shot `dispatch` sets
   * 128 MiB). @default 1 GiB
   */
  keptPluginBytes?: number;
  /**
   * Cap on the bytes of WebAssembly plugins loaded in the executor's life
   * (`createWasmRuntime({ loadedPluginBytes })`; the one-shot `dispatch` sets
   * 256 MiB): past it a hook whose plugin is not loaded ends as `limit`.
   * @default no cap
   */
  loadedPluginBytes?: number;
  /** Replace or add runtimes (tests, embedders). */
  runtimes?: Partial<Record<RuntimeKind, Runtime>>;
  /**
   * Run WebAssembly hooks inside a Web Worker that is terminated when a call
   * overruns its deadline (defence in depth); also enables Extism HTTP for
   * hooks with `allowed_hosts`. @default false
   */
  wasmWorker?: boolean;
  /**
   * Remember each folder's discovery on disk (`<cacheDir>/scans/`) between
   * processes, used while the metadata of every path it read is unchanged:
   * for one-shot processes such as an agent's hook command (the CLI's
   * `dispatch` turns it on). @default false
   */
  scanCache?: boolean;
  /**
   * Lower V8's WebAssembly tier-up budget for the process before the first
   * hook runs, so warm hooks reach optimised code within a few hundred calls
   * (`packages/deno/wasm_tiering.ts`; `HOOKBOX_WASM_TIERING_BUDGET`
   * overrides). The one-shot CLI, which runs V8's baseline compiler only,
   * turns it off. @default true
   */
  tuneWasmTiering?: boolean;
}

/** Creates an executor on this machine (Deno), with the default runtimes. */
export function createExecutor(options: ExecutorOptions = {}): Executor {
  if (options.allowSubprocess !== undefined && typeof options.allowSubprocess !== "boolean") {
    throw new TypeError("allowSubprocess must be a boolean");
  }
  for (const flag of ["wasmWorker", "scanCache", "tuneWasmTiering"] as const) {
    if (options[flag] !== undefined && typeof options[flag] !== "boolean") {
      throw new TypeError(`${flag} must be a boolean`);
    }
  }
  const policy: Partial<Policy> = {
    ...options.policy,
    ...(options.allowSubprocess === undefined ? {} : { allowSubprocess: options.allowSubprocess }),
  };
  return createCoreExecutor({
    fs: denoFs,
    platformDirs: (options.platformDirs ?? []).map(absolute),
    userDir: options.userDir === undefined
      ? defaultUserDir()
      : options.userDir && absolute(options.userDir),
    ...(options.projectDir === undefined
      ? {}
      : { projectDir: options.projectDir && absolute(options.projectDir) }),
    defaultWorkDir: absolute(options.workDir ?? Deno.cwd()),
    runtimes: {
      wasm: wasmRuntime(
        options.cacheDir,
        options.wasmWorker === true,
        options.tuneWasmTiering === false ? null : tuneWasmTiering(),
        options.warmBytes,
        { keptPluginBytes: options.keptPluginBytes, loadedPluginBytes: options.loadedPluginBytes },
      ),
      subprocess: createSubprocessRuntime(),
      prompt: createPromptRuntime(),
      ...options.runtimes,
    },
    policy,
    ...(options.onAsyncResult ? { onAsyncResult: options.onAsyncResult } : {}),
    ...(options.scanCache === true
      ? { scan: cachedScan(options.cacheDir ?? defaultCacheDir(), denoFs, scanPath) }
      : {}),
  });
}

/**
 * The WebAssembly runtime {@linkcode createExecutor} makes (plugins from the
 * compilers and the prepared-plugin cache in `cacheDir`), for a process that
 * makes executor after executor and shares one runtime between them (the
 * CLI's daemon): compiled modules are cached by content and warm instances by
 * hook and plugin, so what a new executor discovers again runs warm.
 */
export function createDenoWasmRuntime(cacheDir?: string): Runtime {
  return wasmRuntime(cacheDir, false, tuneWasmTiering(), undefined, {});
}

/** The wasm runtime fed by the compilers; compiling happens in `prepare`, untimed. */
function wasmRuntime(
  cacheDir: string | undefined,
  worker: boolean,
  tuned: Promise<void> | null,
  warmBytes: number | undefined,
  caps: { keptPluginBytes?: number | undefined; loadedPluginBytes?: number | undefined },
): Runtime {
  const compiled = new WeakMap<HookDefinition, Promise<Uint8Array>>();
  const loadBytes = (hook: HookDefinition): Promise<Uint8Array> => {
    let bytes = compiled.get(hook);
    if (!bytes) {
      bytes = compileHook(hook, cacheDir ? { cacheDir } : {}).then((c) => c.bytes);
      compiled.set(hook, bytes);
      bytes.catch(() => compiled.delete(hook));
    }
    return bytes;
  };
  const tuning = { done: false };
  tuned?.then(() => (tuning.done = true));
  // One-shot processes (an agent's hook command) prepare each plugin once per machine.
  const runtime = worker ? createWasmRuntime({ loadBytes, worker }) : createWasmRuntime({
    loadBytes,
    ...(warmBytes === undefined ? {} : { warmBytes }),
    ...(caps.keptPluginBytes === undefined ? {} : { keptPluginBytes: caps.keptPluginBytes }),
    ...(caps.loadedPluginBytes === undefined ? {} : { loadedPluginBytes: caps.loadedPluginBytes }),
    loadPrepared: preparedFromDiskCache(
      cacheDir ?? defaultCacheDir(),
      loadBytes,
      (hook) => cachedPluginId(hook, cacheDir ? { cacheDir } : {}),
      // JS hooks that run fresh share one engine module (compiled once per process).
      { shareCode: true },
    ),
  });
  return {
    kind: "wasm",
    ...(runtime.selfTimed ? { selfTimed: true } : {}),
    ...(runtime.borrowsInput ? { borrowsInput: true } : {}),
    run: (request) => runtime.run(request),
    // The budget must be lowered before the first instance is made; after
    // that, no extra step per call.
    prepare: (hook, limits) =>
      tuned === null || tuning.done
        ? runtime.prepare?.(hook, limits) ?? Promise.resolve(null)
        : tuned.then(() => runtime.prepare?.(hook, limits) ?? null),
    ...(runtime.stats ? { stats: () => runtime.stats!() } : {}),
    close: () => runtime.close?.() ?? Promise.resolve(),
  };
}
