/**
 * The WebAssembly hook runtime (SPEC §3, §5): plugins loaded through
 * `@extism/extism`, limits enforced by the host on instrumented modules, so
 * they hold without threads or timers (edge runtimes).
 *
 * @example
 * ```ts ignore
 * import { createWasmRuntime } from "./mod.ts";
 * const runtime = createWasmRuntime({
 *   loadBytes: (hook) => Deno.readFile(`${hook.dir}/plugin.wasm`),
 * });
 * const result = await runtime.run(request);
 * if (result.failure) console.log(result.failure.outcome, result.failure.detail);
 * ```
 *
 * @module
 */
import type { HookDefinition } from "../core/hook/types.ts";
import type { EffectiveLimits, Runtime } from "../core/runtime/types.ts";
import type { PluginAbi } from "./_abi.ts";
import { compileBytes, PromiseCache, sha256Hex } from "./_cache.ts";
import { TRAP_MODULE_BYTES } from "./instance/_halt.ts";
import { RESTORE_MODULE_BYTES } from "./instance/_restore.ts";
import { type LoadedPlugin, prepare, type RunsImage, runsImage } from "./_loader.ts";
import { WasmRuntime } from "./_runtime.ts";
import { WorkerRuntime } from "./worker/_worker_runtime.ts";

export type { PluginAbi } from "./_abi.ts";
export type { ImageLayers, LoadedPlugin, MemoryImage, RunsImage } from "./_loader.ts";
export { runsImage };
export { FUEL_SLICE } from "./_fuel.ts";
export { loadsThroughSdk } from "./instance/_instance.ts";

/** Options of {@linkcode createWasmRuntime}. */
export interface WasmRuntimeOptions {
  /** Bytes of the hook's plugin: reads plugin.wasm / scripts/run.wasm, or compiles a script. */
  loadBytes(hook: HookDefinition): Promise<Uint8Array>;
  /**
   * Turns instrumented bytes into a module. Edge bundles pass precompiled
   * modules keyed by SHA-256 (the trap helper module is compiled through it too).
   * @default WebAssembly.compile
   */
  compile?: (bytes: Uint8Array, sha256: string) => Promise<WebAssembly.Module>;
  /**
   * Defence in depth: run the runtime inside Web Workers and terminate a
   * worker whose call overruns its deadline; also enables Extism HTTP for
   * hooks with `allowed_hosts`. Needs the Web Worker API (not on edge
   * runtimes); cannot be combined with `compile`. See docs/runtime.md.
   * @default false
   */
  worker?: boolean;
  /**
   * Benchmarks only: `false` instruments without fuel metering, so the fuel
   * limit is NOT enforced (time still is, at host calls). Never set it for
   * untrusted hooks. @default true
   */
  meterFuel?: boolean;
  /** Workers per runtime in worker mode. @default 1 */
  workers?: number;
  /**
   * Worker mode: start the workers now instead of at the first calls, so a
   * server's first events do not wait for a worker to load the runtime.
   * @default false
   */
  startWorkers?: boolean;
  /**
   * Worker mode: starts a worker thread for `url` (a module worker). A host
   * that can run out of file descriptors passes one that refuses the start
   * (`host-deno`'s `startModuleWorker`): calls then fail as `WORKER_FAILED`
   * instead of the process ending. @default `new Worker(url, { type: "module" })`
   */
  startWorker?: (url: URL) => Worker;
  /**
   * Cap on the bytes idle warm instances hold (memory, block map and
   * snapshot); past it
   * the least recently used are closed. 0 keeps none: every call then runs
   * on a fresh instance (a one-shot process never calls a hook twice).
   * @default 256 MiB
   */
  warmBytes?: number;
  /**
   * Plugins prepared ahead of time (edge bundles, `hookbox bundle`): the
   * instrumented module and its load metadata for a hook under given limits
   * and isolation — the hook's own, or `"fresh"` when the runtime keeps no
   * warm instances (`warmBytes: 0`: a warm hook then runs fresh, and needs
   * no write tracking). When set, `loadBytes` is not called and nothing is
   * instrumented or compiled at run time. Cannot be combined with `worker`.
   */
  loadPrepared?: (
    hook: HookDefinition,
    limits: EffectiveLimits,
    isolation: "fresh" | "warm",
  ) => Promise<LoadedPlugin>;
  /**
   * One instrumented, compiled module for all the plugins that differ only
   * in the data their memory starts with (every JS hook is the QuickJS engine
   * with its script's snapshot), each plugin keeping its data and its
   * policy's memory cap apart (docs/runtime.md, "One engine, many hooks").
   * Warm instances of such plugins restore their whole memory after a call
   * instead of the blocks it wrote. Not in worker mode. @default false
   */
  shareCode?: boolean;
  /**
   * Runs one call at a time, in the order asked: the next call's instance is
   * made once the call before it is over, so the memory of running instances
   * is at most one call's. Without it, concurrent calls each hold their
   * instance while they wait their turn for the thread. For edge isolates,
   * which have one thread for every call anyway and a memory limit that ends
   * the isolate, and every request in it, when passed. Not in worker mode.
   * @default false
   */
  oneCallAtATime?: boolean;
  /**
   * Cap on the bytes of the plugins kept loaded for later calls (counted by
   * their instrumented modules' size; compiled, a module holds about three
   * times that): past it the least recently called are let go and loaded
   * again when next called, so a thousand big plugins (a repository's, a
   * tenant's) cannot hold gigabytes. In worker mode each worker keeps its
   * share of the default. @default 1 GiB
   */
  keptPluginBytes?: number;
  /**
   * Cap on the bytes of the plugins this runtime loads in its life (counted
   * like `keptPluginBytes`, each load once, plugins let go and loaded again
   * included): once reached, a call whose plugin is not loaded fails as
   * `limit` (`LIMIT_MODULE`) without loading it, `on_error` applied. For
   * short processes (the one-shot `dispatch` sets 256 MiB), where plugins let
   * go are not collected before the process ends: a repository's thousand
   * big plugins would otherwise cost gigabytes in one hook call. Not in
   * worker mode. @default no cap
   */
  loadedPluginBytes?: number;
}

/** Creates the `wasm` runtime. Throws `TypeError` on bad options. */
export function createWasmRuntime(options: WasmRuntimeOptions): Runtime {
  if (typeof options?.loadBytes !== "function") {
    throw new TypeError("createWasmRuntime: options.loadBytes must be a function");
  }
  if (options.compile !== undefined && typeof options.compile !== "function") {
    throw new TypeError("createWasmRuntime: options.compile must be a function");
  }
  if (
    options.warmBytes !== undefined &&
    (!Number.isSafeInteger(options.warmBytes) || options.warmBytes < 0)
  ) {
    throw new TypeError("createWasmRuntime: options.warmBytes must be a non-negative integer");
  }
  if (options.loadPrepared !== undefined && typeof options.loadPrepared !== "function") {
    throw new TypeError("createWasmRuntime: options.loadPrepared must be a function");
  }
  if (options.meterFuel !== undefined && typeof options.meterFuel !== "boolean") {
    throw new TypeError("createWasmRuntime: options.meterFuel must be a boolean");
  }
  if (options.worker !== undefined && typeof options.worker !== "boolean") {
    throw new TypeError("createWasmRuntime: options.worker must be a boolean");
  }
  if (options.shareCode !== undefined && typeof options.shareCode !== "boolean") {
    throw new TypeError("createWasmRuntime: options.shareCode must be a boolean");
  }
  if (
    options.keptPluginBytes !== undefined &&
    (!Number.isSafeInteger(options.keptPluginBytes) || options.keptPluginBytes < 0)
  ) {
    throw new TypeError(
      "createWasmRuntime: options.keptPluginBytes must be a non-negative integer",
    );
  }
  if (
    options.loadedPluginBytes !== undefined &&
    (!Number.isSafeInteger(options.loadedPluginBytes) || options.loadedPluginBytes < 0)
  ) {
    throw new TypeError(
      "createWasmRuntime: options.loadedPluginBytes must be a non-negative integer",
    );
  }
  if (options.oneCallAtATime !== undefined && typeof options.oneCallAtATime !== "boolean") {
    throw new TypeError("createWasmRuntime: options.oneCallAtATime must be a boolean");
  }
  if (options.startWorkers !== undefined && typeof options.startWorkers !== "boolean") {
    throw new TypeError("createWasmRuntime: options.startWorkers must be a boolean");
  }
  if (options.startWorker !== undefined && typeof options.startWorker !== "function") {
    throw new TypeError("createWasmRuntime: options.startWorker must be a function");
  }
  if (!options.worker) return new WasmRuntime(options);
  const workers = options.workers ?? 1;
  if (!Number.isInteger(workers) || workers < 1 || workers > 64) {
    throw new TypeError("createWasmRuntime: options.workers must be an integer from 1 to 64");
  }
  if (typeof Worker !== "function") {
    throw new TypeError("createWasmRuntime: options.worker needs the Web Worker API");
  }
  if (
    options.compile !== undefined || options.loadPrepared !== undefined ||
    options.oneCallAtATime !== undefined || options.keptPluginBytes !== undefined ||
    options.loadedPluginBytes !== undefined
  ) {
    throw new TypeError(
      "createWasmRuntime: options.compile, options.loadPrepared, options.oneCallAtATime, options.keptPluginBytes and options.loadedPluginBytes cannot be used with options.worker",
    );
  }
  return new WorkerRuntime({
    loadBytes: options.loadBytes,
    workers,
    ...(options.warmBytes === undefined ? {} : { warmBytes: options.warmBytes }),
    ...(options.startWorkers ? { start: true } : {}),
    ...(options.startWorker === undefined ? {} : { startWorker: options.startWorker }),
  });
}

/** Options of {@linkcode loadPlugin}. */
export interface LoadPluginOptions {
  /** Linear memory cap the module is instrumented for. @default 64 */
  memoryMb?: number;
  /** Module size cap. @default 4096 */
  moduleKb?: number;
  /** Expected SHA-256 of the bytes (hex, HOOK.md `sha256`). */
  sha256?: string;
  /** File the bytes came from, for error messages. */
  path?: string;
  /** Compiles the instrumented bytes. @default WebAssembly.compile */
  compile?: (bytes: Uint8Array, sha256: string) => Promise<WebAssembly.Module>;
}

/** What {@linkcode loadPlugin} reports about a valid plugin. */
export interface PluginInfo {
  /** Whether it is an Extism plugin or a WASI command. */
  abi: PluginAbi;
  /** SHA-256 of the original bytes. */
  sha256: string;
  /** SHA-256 of the instrumented bytes (the compiled-module cache key). */
  instrumentedSha256: string;
  /** Size of the original bytes. */
  byteLength: number;
  /** The compiled, instrumented module. */
  module: WebAssembly.Module;
}

/**
 * Validates and compiles a plugin exactly as the runtime would, for `validate`
 * and `compile`. Throws `HookboxError` with code `PLUGIN_INVALID`,
 * `PLUGIN_IMPORT_DENIED`, `PLUGIN_EXPORT_MISSING`, `PLUGIN_HASH_MISMATCH` or
 * `LIMIT_MODULE`.
 */
export async function loadPlugin(
  bytes: Uint8Array,
  options: LoadPluginOptions = {},
): Promise<PluginInfo> {
  const loaded = await prepare(bytes, {
    limits: { memoryMb: options.memoryMb ?? 64, moduleKb: options.moduleKb ?? 4096 },
    pin: options.sha256?.replace(/^sha256:/, "").toLowerCase(),
    path: options.path,
    compile: options.compile ?? compileBytes,
    modules: new PromiseCache(1),
  });
  const { abi, sha256, instrumentedSha256, module } = loaded;
  return { abi, sha256, instrumentedSha256, byteLength: bytes.byteLength, module };
}

/** A plugin prepared ahead of time: its instrumented bytes and the metadata that loads them. */
export interface PreparedPlugin extends Omit<LoadedPlugin, "module" | "image"> {
  /** The instrumented module (named by `instrumentedSha256`). */
  bytes: Uint8Array;
  /**
   * With `shareCode`, when it applied: what the memory starts with, as runs
   * of `[offset, bytes]` (the loader's `image` is `runsImage(runs)`).
   */
  runs?: [number, Uint8Array][];
}

/** Modules {@linkcode preparePlugin} compiled, by instrumented SHA-256. */
const PREPARED_MODULES = new PromiseCache<WebAssembly.Module>(4);

/** Options of {@linkcode preparePlugin}: what shapes the instrumented bytes. */
export interface PreparePluginOptions {
  /** The limits that shape the instrumented bytes. */
  limits: Pick<EffectiveLimits, "memoryMb" | "moduleKb">;
  /** HOOK.md `isolation`: warm plugins get write tracking. */
  isolation: "fresh" | "warm";
  /** Expected SHA-256 of the bytes (HOOK.md `sha256`). */
  sha256?: string | undefined;
  /** For error messages. */
  path?: string;
  /** Share the instrumented module among plugins that differ only in their data (`PrepareContext.shareCode`). */
  shareCode?: boolean;
  /**
   * With `shareCode`: whether the shared module tracks writes (warm instances
   * restore only what a call wrote; `PrepareContext.trackShared`). Plugins
   * that are to share one module pass the same value. @default isolation === "warm"
   */
  trackShared?: boolean;
}

/**
 * Runs everything the runtime does before a call — size cap, pin, validation,
 * import policy, instrumentation, compilation as a check — once, ahead of
 * time, and returns the instrumented bytes with their load metadata (edge
 * bundles: `createWasmRuntime({ loadPrepared })` then loads them with no
 * rewriter and no run-time compilation). Throws `HookboxError` as the runtime
 * would report it.
 */
export async function preparePlugin(
  bytes: Uint8Array,
  options: PreparePluginOptions,
): Promise<PreparedPlugin> {
  let instrumented: Uint8Array | null = null;
  const loaded = await prepare(bytes, {
    limits: options.limits,
    pin: options.sha256,
    path: options.path,
    trackWrites: options.isolation === "warm",
    importMemory: options.isolation !== "warm",
    shareCode: options.shareCode ?? false,
    ...(options.trackShared === undefined ? {} : { trackShared: options.trackShared }),
    keepBytes: (out) => instrumented = out,
    compile: compileBytes,
    // Compiled once as a check for every plugin that shares the module (a bundle's JS hooks).
    modules: PREPARED_MODULES,
  });
  const { module: _, image, ...meta } = loaded;
  const runs = (image as RunsImage | undefined)?.runs;
  return {
    ...meta,
    bytes: instrumented!,
    ...(runs ? { runs: runs.map(([at, bytes]) => [at, bytes] as [number, Uint8Array]) } : {}),
  };
}

/**
 * Instruments and compiles `bytes` as a run with `limits` would, keeping
 * nothing: resolves when a call could load the plugin, else throws the
 * `HookboxError` the call would report (upload checks).
 */
export async function checkPlugin(
  bytes: Uint8Array,
  options: { limits: Pick<EffectiveLimits, "memoryMb" | "moduleKb">; path?: string | undefined },
): Promise<void> {
  await prepare(bytes, {
    limits: options.limits,
    compile: (out) => WebAssembly.compile(out as Uint8Array<ArrayBuffer>),
    modules: new PromiseCache(1),
    path: options.path,
  });
}

/** The small helper module the runtime compiles to stop plugins that catch exceptions. */
export function trapModule(): Promise<{ sha256: string; bytes: Uint8Array }> {
  return helperModule(TRAP_MODULE_BYTES);
}

/**
 * The small helper module the runtime compiles to restore the blocks a warm
 * call wrote (`docs/runtime.md`, "How isolation is made"; needs multi-memory).
 */
export function restoreModule(): Promise<{ sha256: string; bytes: Uint8Array }> {
  return helperModule(RESTORE_MODULE_BYTES);
}

async function helperModule(bytes: Uint8Array): Promise<{ sha256: string; bytes: Uint8Array }> {
  return { sha256: await sha256Hex(bytes), bytes };
}

// Types the exports above refer to.
export type { DispatchResult, HookRecord, Outcome } from "../core/dispatch/result.ts";
export type { HookDefinition, HookEntry, HookLevel, WasmFormat } from "../core/hook/types.ts";
export type { Policy } from "../core/policy.ts";
export type { FailureCode, FailureOutcome, RunFailure } from "../core/runtime/failure.ts";
export { FAILURE_CODES } from "../core/runtime/failure.ts";
export type {
  ChainAnswer,
  ChainRequest,
  EffectiveLimits,
  RunRequest,
  RunResult,
  Runtime,
  RuntimeKind,
  RuntimeStats,
} from "../core/runtime/types.ts";
export type { HookEvent } from "../core/schema/event.ts";
export type { EventType } from "../core/schema/event_types.ts";
export { EVENT_TYPES } from "../core/schema/event_types.ts";
export type { Manifest, ManifestLimits } from "../core/schema/manifest.ts";
export type { InjectItem } from "../core/schema/output.ts";
