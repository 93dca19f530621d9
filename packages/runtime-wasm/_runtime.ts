/**
 * The `wasm` runtime: load (cached per hook definition and by content hash),
 * pick a fresh or warm instance, run the call, report the result.
 *
 * @module
 */
import { HookboxError, isHookboxError } from "../core/errors.ts";
import type { HookDefinition } from "../core/hook/types.ts";
import type {
  EffectiveLimits,
  RunFailure,
  RunRequest,
  RunResult,
  Runtime,
  RuntimeStats,
} from "../core/runtime/types.ts";
import { compileBytes, type CompileFn, sha256Hex, WeakCache } from "./_cache.ts";
import { failed, loadFailure } from "./_failures.ts";
import { MemoryPool } from "./instance/_memories.ts";
import { TRAP_MODULE_BYTES, trapFunction } from "./instance/_halt.ts";
import type { CallSetup } from "./_host.ts";
import { HttpSession, type HttpSetup, type HttpTransport, MAX_HTTP_BODY } from "./http/_http.ts";
import { PluginInstance, type Retired } from "./instance/_instance.ts";
import { type LoadedPlugin, prepare } from "./_loader.ts";
import { MAX_IDLE_INSTANCES, WARM_POOL_BYTES, WarmPool } from "./instance/_pool.ts";
import { RESTORE_MODULE_BYTES } from "./instance/_restore.ts";
import type { SnapshotImage } from "./instance/_snapshot.ts";

/** Options of {@linkcode WasmRuntime}; see `WasmRuntimeOptions` in mod.ts. */
export interface RuntimeDeps {
  loadBytes(hook: HookDefinition): Promise<Uint8Array>;
  compile?: CompileFn;
  /** Benchmarks only: no fuel metering (the fuel limit is not enforced). @default true */
  meterFuel?: boolean;
  /** Serves Extism HTTP; only a runtime inside a worker has one. */
  httpTransport?: HttpTransport;
  /** Cap on the bytes idle warm instances hold (LRU); 0 keeps none. @default 256 MiB */
  warmBytes?: number;
  /**
   * Of how many runtimes of one process this is one (a worker pool's workers):
   * its share of the process's idle instances (`MAX_IDLE_INSTANCES`). @default 1
   */
  shareOf?: number;
  /** One module for plugins that differ only in their data (`WasmRuntimeOptions.shareCode`). */
  shareCode?: boolean;
  /** Cap on the bytes of plugins kept loaded (`WasmRuntimeOptions.keptPluginBytes`). */
  keptPluginBytes?: number;
  /** Cap on the bytes of plugins loaded in the runtime's life (`WasmRuntimeOptions.loadedPluginBytes`). */
  loadedPluginBytes?: number;
  /** One call at a time (`WasmRuntimeOptions.oneCallAtATime`). */
  oneCallAtATime?: boolean;
  /** Plugins prepared ahead of time (edge bundles): used instead of loadBytes + rewriter. */
  loadPrepared?: (
    hook: HookDefinition,
    limits: EffectiveLimits,
    isolation: "fresh" | "warm",
  ) => Promise<LoadedPlugin>;
}

type Setup = CallSetup & HttpSetup;

/** Implements {@linkcode Runtime} for WebAssembly plugins. */
const PREPARED: Promise<RunFailure | null> = Promise.resolve(null);

export class WasmRuntime implements Runtime {
  readonly kind = "wasm" as const;
  /** Calls run on this thread and stop at their deadline by themselves. */
  readonly selfTimed = true;
  /** The input is read during the call only (an Extism plugin's block is a copy). */
  readonly borrowsInput = true;
  readonly #deps: RuntimeDeps;
  readonly #compile: CompileFn;
  // Found again while a kept plugin holds them; the kept plugins alone hold them alive.
  readonly #modules = new WeakCache<WebAssembly.Module>();
  readonly #prepared = new WeakCache<LoadedPlugin>();
  #byHook = new WeakMap<HookDefinition, Map<number | string, Promise<LoadedPlugin>>>();
  /** Settled loads, so the warm path does not wait on a promise. */
  #settled = new WeakMap<HookDefinition, Map<number | string, Kept>>();
  /**
   * The loaded plugins kept (compiled code is several times a plugin's
   * bytes), oldest first, bounded in bytes: past the cap the least recently
   * called are let go, and loaded again when next called.
   */
  #kept = new Map<LoadedPlugin, Kept>();
  /** Kept bytes by owner (`ownerOf` the call that last used each plugin; "" for one prepared ahead). */
  #keptBy = new Map<string, number>();
  #keptBytes = 0;
  readonly #maxKept: number;
  /** Bytes of the plugins loaded so far, let go or not, and their cap. */
  #loadedBytes = 0;
  readonly #maxLoaded: number;

  #trapFn: (() => never) | null = null;
  readonly #pool: WarmPool;
  /**
   * False with a zero cap: no instance would be kept, so a warm hook runs
   * like a fresh one instead of paying for a snapshot that is thrown away.
   */
  readonly #keepWarm: boolean;
  /** Zeroed memories for fresh instances of plugins that import theirs. */
  readonly #memories: MemoryPool;
  /**
   * The pristine memory image of each loaded plugin, shared by the snapshots
   * of its warm instances: the instance that took it counts it against the
   * warm-pool cap, the others share it for free. Held weakly: it lives as
   * long as an instance uses it.
   */
  #images = new WeakMap<LoadedPlugin, WeakRef<SnapshotImage>>();
  #trap: Promise<() => never> | null = null;
  #restore: Promise<WebAssembly.Module | null> | null = null;
  /** Instances created for a call and not yet closed or back in the warm pool. */
  #running = 0;
  /** With `oneCallAtATime`: a call is running, and the calls waiting for it, in order. */
  #busy = false;
  readonly #waiting: (() => void)[] = [];

  constructor(deps: RuntimeDeps) {
    this.#deps = deps;
    this.#compile = deps.compile ?? compileBytes;
    const shareOf = deps.shareOf ?? 1;
    this.#pool = new WarmPool(deps.warmBytes, Math.floor(MAX_IDLE_INSTANCES / shareOf));
    // Zeroed memories for fresh instances share the warm instances' allowance: a quarter of it
    // (each counted as a page at least, so at most MAX_IDLE_INSTANCES / 4 of them).
    this.#memories = new MemoryPool(
      Math.min(
        Math.floor((deps.warmBytes ?? WARM_POOL_BYTES) / 4),
        Math.floor(MAX_IDLE_INSTANCES / 4 / shareOf) * 65536,
      ),
    );
    this.#keepWarm = deps.warmBytes !== 0;
    this.#maxKept = Math.floor((deps.keptPluginBytes ?? KEPT_PLUGIN_BYTES) / shareOf);
    this.#maxLoaded = deps.loadedPluginBytes ?? Infinity;
  }

  /** Runs one call; plugin misbehaviour comes back as `failure`. */
  run(request: RunRequest): Promise<RunResult> {
    return this.#deps.oneCallAtATime ? this.#runInTurn(request) : this.#run(request);
  }

  async #runInTurn(request: RunRequest): Promise<RunResult> {
    // The call that ends hands its turn to the first waiting (`#busy` stays set).
    if (this.#busy) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else this.#busy = true;
    try {
      return await this.#run(request);
    } finally {
      const next = this.#waiting.shift();
      if (next === undefined) this.#busy = false;
      else next();
    }
  }

  async #run(request: RunRequest): Promise<RunResult> {
    const started = request.started ?? performance.now();
    const { limits, hook } = request;
    if (request.input.byteLength > limits.inputKb * 1024) return failed("LIMIT_INPUT");
    let loaded: LoadedPlugin;
    let trap: () => never;
    try {
      trap = this.#trapFn ?? await this.#trapFunction();
      const owner = ownerOf(hook, request.tenantId);
      const cached = this.#loaded(hook, limits, owner);
      loaded = cached ?? await this.#load(hook, limits, owner);
    } catch (err) {
      return loadFailure(err);
    }
    const setup = callSetup(request, loaded, started);
    if (hook.manifest.isolation !== "warm" || !this.#keepWarm) {
      return await this.#runFresh(loaded, trap, setup);
    }
    return await this.#runWarm(warmKey(request, loaded), loaded, trap, setup);
  }

  /** Idle warm instances and the bytes they hold. */
  stats(): RuntimeStats {
    return {
      warmInstances: this.#pool.idleCount,
      warmIdleBytes: this.#pool.idleBytes,
      running: this.#running,
      keptPlugins: this.#kept.size,
      keptPluginBytes: this.#keptBytes,
      loadedPluginBytes: this.#loadedBytes,
      pooledMemoryBytes: this.#memories.bytes,
    };
  }

  /** Loads, checks, instruments and compiles the hook's plugin ahead of its first call. */
  prepare(hook: HookDefinition, limits: EffectiveLimits): Promise<RunFailure | null> {
    // Already loaded (every call after the first): nothing to wait for.
    if (this.#trapFn && this.#loaded(hook, limits)) return PREPARED;
    return this.#prepareSlow(hook, limits);
  }

  async #prepareSlow(hook: HookDefinition, limits: EffectiveLimits): Promise<RunFailure | null> {
    try {
      this.#trapFn ??= await this.#trapFunction();
      if (!this.#loaded(hook, limits)) await this.#load(hook, limits, "");
      return null;
    } catch (err) {
      return loadFailure(err).failure ?? null;
    }
  }

  /** Closes warm instances and forgets caches. */
  async close(): Promise<void> {
    await this.#pool.close();
    this.#modules.clear();
    this.#prepared.clear();
    this.#kept = new Map();
    this.#keptBy = new Map();
    this.#keptBytes = 0;
    this.#byHook = new WeakMap();
    this.#settled = new WeakMap();
    this.#images = new WeakMap();
    this.#memories.clear();
  }

  async #runFresh(loaded: LoadedPlugin, trap: () => never, setup: Setup) {
    this.#running++;
    let instance: PluginInstance | RunResult | null = null;
    try {
      instance = await this.#create(loaded, trap, setup);
      if (!(instance instanceof PluginInstance)) return instance;
      return await instance.call(setup);
    } finally {
      if (instance instanceof PluginInstance) await instance.close();
      this.#running--;
    }
  }

  /**
   * A new instance of `loaded`, its memory and block map from the pool when
   * it imports them; closed, it gives them back (see {@linkcode #retire}).
   */
  async #create(
    loaded: LoadedPlugin,
    trap: () => never,
    setup: Setup,
  ): Promise<PluginInstance | RunResult> {
    const memories = this.#memories;
    const memory = loaded.memoryImport ? memories.take(loaded) : null;
    const created = await PluginInstance.create(
      loaded,
      trap,
      setup,
      this.#http(),
      memory,
      (pages) => memories.takeMap(pages),
    );
    if (created instanceof PluginInstance) {
      created.onClose = (retired) => this.#retire(loaded, memory, retired);
    }
    return created;
  }

  /** Pools what a closed instance of `loaded` held. */
  #retire(loaded: LoadedPlugin, given: WebAssembly.Memory | null, retired: Retired): void {
    // Its memory, unless the plugin was let go meanwhile (a pool keyed by the plugin would hold
    // it, module and all).
    if (given !== null && retired.memory === given && this.#kept.has(loaded)) {
      this.#memories.give(loaded, given);
    }
    if (retired.map !== null) this.#memories.giveMap(retired.map);
    if (retired.image !== null) this.#memories.giveImage(retired.image);
  }

  async #runWarm(key: string, loaded: LoadedPlugin, trap: () => never, setup: Setup) {
    let instance = this.#pool.acquire(key);
    if (instance === "busy") return await this.#runFresh(loaded, trap, setup);
    this.#running++;
    try {
      if (instance === null) {
        const created = await this.#create(loaded, trap, setup);
        if (!(created instanceof PluginInstance)) return created;
        const restore = created.tracksWrites ? await this.#restoreModule() : null;
        const image = created.snapshot(
          this.#images.get(loaded)?.deref() ?? null,
          restore,
          (pages) => this.#memories.takeImage(pages),
        );
        this.#images.set(loaded, new WeakRef(image));
        this.#pool.add(key, created);
        instance = created;
      }
      try {
        return await instance.call(setup);
      } finally {
        const released = this.#pool.release(key, instance);
        if (released !== undefined) await released;
      }
    } finally {
      this.#running--;
    }
  }

  #http(): HttpSession | null {
    const transport = this.#deps.httpTransport;
    return transport === undefined ? null : new HttpSession(transport);
  }

  /** The plugin kept for `hook` and `limits`, now `owner`'s (unless not given). */
  #loaded(hook: HookDefinition, limits: EffectiveLimits, owner?: string): LoadedPlugin | undefined {
    const kept = this.#settled.get(hook)?.get(loadKey(hook, limits));
    if (kept === undefined) return undefined;
    kept.used = true;
    if (owner !== undefined && kept.owner !== owner) {
      this.#own(kept.owner, -kept.bytes);
      kept.owner = owner;
      this.#own(owner, kept.bytes);
    }
    return kept.loaded;
  }

  #load(hook: HookDefinition, limits: EffectiveLimits, owner: string): Promise<LoadedPlugin> {
    const key = loadKey(hook, limits);
    let perHook = this.#byHook.get(hook);
    if (perHook === undefined) this.#byHook.set(hook, perHook = new Map());
    let loading = perHook.get(key);
    if (loading === undefined) {
      const map = perHook;
      // Past the cap nothing more is loaded (refused like a plugin over its size cap, and
      // remembered: the cap never comes back in the runtime's life).
      loading = this.#loadedBytes >= this.#maxLoaded
        ? Promise.reject(this.#overLoaded())
        : this.#loadBytes(hook, limits, key);
      map.set(key, loading);
      // A refusal (a HookboxError: invalid plugin, denied import, over a cap...)
      // is final for these bytes and limits: remembered, so a broken plugin is not
      // re-read and re-instrumented on every event. Other errors (reading the
      // bytes) are retried by the next call.
      loading.then((loaded) => {
        let settled = this.#settled.get(hook);
        if (settled === undefined) this.#settled.set(hook, settled = new Map());
        const kept = this.#keep(loaded, owner);
        settled.set(key, kept);
        // Loaded: the record answers from now on (a load under way is all this map holds).
        if (map.get(key) === loading) map.delete(key);
        // Let go, the hook loads it again when next called. Held weakly: a hook gone is not kept.
        kept.users.push({ settled: new WeakRef(settled), key });
        if (kept.users.length > 64) {
          kept.users = kept.users.filter((user) => user.settled.deref() !== undefined);
        }
      }, (err) => {
        if (!isHookboxError(err)) map.delete(key);
      });
    }
    return loading;
  }

  async #loadBytes(hook: HookDefinition, limits: EffectiveLimits, key: number | string) {
    // A runtime that keeps no warm instance runs every hook fresh: no write tracking.
    const isolation = this.#keepWarm ? hook.manifest.isolation : "fresh";
    if (this.#deps.loadPrepared) return await this.#deps.loadPrepared(hook, limits, isolation);
    const bytes = await this.#deps.loadBytes(hook);
    const pin = hook.manifest.sha256;
    const sha = await sha256Hex(bytes);
    const path = hook.entry.runtime === "wasm" ? hook.entry.path : hook.dir;
    return await this.#prepared.get(
      `${sha}:${key}:${pin ?? ""}:${isolation}`,
      () =>
        prepare(bytes, {
          limits,
          pin,
          path,
          compile: this.#compile,
          modules: this.#modules,
          meterFuel: this.#deps.meterFuel ?? true,
          trackWrites: isolation === "warm",
          importMemory: isolation !== "warm",
          shareCode: this.#deps.shareCode ?? false,
        }),
    );
  }

  /** The refusal of a load past `loadedPluginBytes`. */
  #overLoaded(): HookboxError {
    const mib = (n: number) => Math.round(n / 2 ** 20);
    return new HookboxError(
      "LIMIT_MODULE",
      `this process has loaded ${mib(this.#loadedBytes)} MiB of plugins, its cap is ${
        mib(this.#maxLoaded)
      } MiB (loadedPluginBytes): no more are loaded in it`,
      { field: "loaded_plugin_bytes" },
    );
  }

  /**
   * The record that keeps `loaded` (made at its first load, weighed by its
   * module's bytes, `owner`'s), letting go of plugins past the cap: those of
   * the owner whose plugins weigh the most, least recently called first (a
   * plugin called since the last look gets a second chance), so one tenant's
   * thousand big plugins let go of its own, never every other tenant's. The
   * plugin just loaded is never let go here.
   */
  #keep(loaded: LoadedPlugin, owner: string): Kept {
    const had = this.#kept.get(loaded);
    if (had !== undefined) return had;
    const kept: Kept = { loaded, bytes: loaded.byteLength ?? 0, used: false, users: [], owner };
    // A plugin another hook has loaded already (the same bytes) is not loaded again.
    this.#loadedBytes += kept.bytes;
    this.#kept.set(loaded, kept);
    this.#keptBytes += kept.bytes;
    this.#own(owner, kept.bytes);
    while (this.#keptBytes > this.#maxKept) {
      const victim = this.#victim(kept);
      if (victim === undefined) break;
      this.#letGo(victim);
    }
    return kept;
  }

  /** The kept plugin to let go next (see {@linkcode #keep}); `spare` is not one. */
  #victim(spare: Kept): Kept | undefined {
    let heaviest: string | undefined, most = 0;
    for (const [owner, bytes] of this.#keptBy) {
      const weight = owner === spare.owner ? bytes - spare.bytes : bytes;
      if (weight > most) [heaviest, most] = [owner, weight];
    }
    if (heaviest === undefined) return undefined;
    // Oldest first; one called since the last look goes to the back (and is met again).
    for (const [plugin, record] of this.#kept) {
      if (record.owner !== heaviest || record === spare) continue;
      if (!record.used) return record;
      record.used = false;
      this.#kept.delete(plugin);
      this.#kept.set(plugin, record);
    }
    return undefined;
  }

  #letGo(old: Kept): void {
    this.#kept.delete(old.loaded);
    this.#keptBytes -= old.bytes;
    this.#own(old.owner, -old.bytes);
    this.#memories.forget(old.loaded);
    for (const { settled, key } of old.users) {
      const map = settled.deref();
      if (map?.get(key) === old) map.delete(key);
    }
  }

  /** Counts `bytes` (negative: no longer) as kept for `owner`. */
  #own(owner: string, bytes: number): void {
    const left = (this.#keptBy.get(owner) ?? 0) + bytes;
    if (left > 0) this.#keptBy.set(owner, left);
    else this.#keptBy.delete(owner);
  }

  /**
   * The restorer module, compiled once (through `compile`, so an edge bundle
   * supplies it); null if it cannot be had: warm instances then restore their
   * whole memory, which is slower but as exact.
   */
  #restoreModule(): Promise<WebAssembly.Module | null> {
    this.#restore ??= this.#compileHelper(RESTORE_MODULE_BYTES).catch(() => null);
    return this.#restore;
  }

  #trapFunction(): Promise<() => never> {
    this.#trap ??= this.#compileHelper(TRAP_MODULE_BYTES)
      .then((module) => (this.#trapFn = trapFunction(module)));
    return this.#trap;
  }

  /** One of the runtime's own small modules, compiled by SHA-256 like a prepared plugin. */
  async #compileHelper(bytes: Uint8Array): Promise<WebAssembly.Module> {
    return await this.#compile(bytes, await sha256Hex(bytes));
  }
}

/**
 * Bytes of plugins a runtime keeps loaded unless told otherwise (shared out
 * among a pool's workers): compiled, a plugin holds about three times its
 * bytes (a 4 MiB plugin ~11 MB), so a repository's or a tenant's thousand
 * big plugins would otherwise hold gigabytes for as long as their hooks are
 * known.
 */
export const KEPT_PLUGIN_BYTES = 1024 * 1024 * 1024;

/** A loaded plugin as the runtime keeps it. */
interface Kept {
  loaded: LoadedPlugin;
  /** Its module's bytes (`LoadedPlugin.byteLength`; 0 when not known). */
  bytes: number;
  /** Called since the last look (a second chance before it is let go). */
  used: boolean;
  /** Whose it is: `ownerOf` the call that last used it ("" for one prepared ahead of any call). */
  owner: string;
  /** Where each hook that loaded it keeps this record (forgotten there when it is let go). */
  users: { settled: WeakRef<Map<number | string, Kept>>; key: number | string }[];
}

/** Project hooks' owners, worked out once per hook definition. */
const projectOwners = new WeakMap<HookDefinition, { tenantId: string; owner: string }>();

/**
 * Whose a kept plugin is, for letting go the heaviest's first: the call's
 * tenant, and for a project hook also its project's hooks folder (one user's
 * daemon serves every repository, all as one tenant: a repository's plugins
 * must not let go of the user's or another repository's).
 */
function ownerOf(hook: HookDefinition, tenantId: string): string {
  if (hook.level !== "project") return tenantId;
  const known = projectOwners.get(hook);
  if (known?.tenantId === tenantId) return known.owner;
  const folder = hook.dir.slice(0, Math.max(0, hook.dir.lastIndexOf("/")));
  const owner = `${tenantId}\0${folder}`;
  projectOwners.set(hook, { tenantId, owner });
  return owner;
}

/** What a loaded plugin depends on besides its bytes: the limits and the isolation. */
function loadKey(hook: HookDefinition, limits: EffectiveLimits): number | string {
  const warm = hook.manifest.isolation === "warm" ? 1 : 0;
  const { memoryMb, moduleKb } = limits;
  // Looked up on every call: a number (no string to build and hash) whenever
  // the caps pack exactly into one (below 2^52), else the same facts as text.
  if (
    Number.isInteger(memoryMb) && Number.isInteger(moduleKb) && memoryMb >= 0 && moduleKb >= 0 &&
    memoryMb < 2 ** 20 && moduleKb < 2 ** 31
  ) return (moduleKb * 2 ** 20 + memoryMb) * 2 + warm;
  return `${memoryMb}:${moduleKb}:${warm}`;
}

/** Warm-pool keys by plugin, hook and tenant: built once, not per call (and hashed once). */
const warmKeys = new WeakMap<LoadedPlugin, WeakMap<HookDefinition, Map<string, string>>>();

function warmKey(request: RunRequest, loaded: LoadedPlugin): string {
  const { tenantId, hook } = request;
  let byHook = warmKeys.get(loaded);
  if (byHook === undefined) warmKeys.set(loaded, byHook = new WeakMap());
  let byTenant = byHook.get(hook);
  if (byTenant === undefined) byHook.set(hook, byTenant = new Map());
  let key = byTenant.get(tenantId);
  if (key === undefined) {
    // Both hashes: plugins that share one instrumented module differ in their original bytes.
    key = `${tenantId}\0${hook.dir}\0${hook.name}\0${loaded.sha256}\0${loaded.instrumentedSha256}`;
    // Bounded: a hook seen by very many tenants starts over rather than growing.
    if (byTenant.size >= MAX_KEYS_PER_HOOK) byTenant.clear();
    byTenant.set(tenantId, key);
  }
  return key;
}

const MAX_KEYS_PER_HOOK = 4096;

function callSetup(request: RunRequest, loaded: LoadedPlugin, started: number): Setup {
  const { limits, hook } = request;
  const env: string[] = [];
  for (const name of hook.manifest.env) {
    const value = request.env[name];
    if (value !== undefined) env.push(`${name}=${value}`);
  }
  return {
    input: request.input,
    env,
    fuel: limits.fuel,
    outputBytes: limits.outputKb * 1024,
    hostBytes: loaded.hostBytes,
    deadline: started + limits.timeoutMs,
    signal: request.signal,
    http: {
      allowedHosts: request.allowedHosts ?? [],
      maxBytes: Math.min(limits.outputKb * 1024, MAX_HTTP_BODY),
    },
  };
}
