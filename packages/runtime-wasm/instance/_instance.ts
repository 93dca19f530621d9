/**
 * One instantiated plugin with our WASI shim, Extism kernel overrides and
 * `hookbox.*` imports. A plugin that can reach the Extism kernel (the Extism
 * ABI, or a kernel import) is loaded through `@extism/extism`'s foreground
 * plugin; any other (a WASI command: QuickJS, AssemblyScript and C hooks) is
 * instantiated directly, with the same host functions bound the same way,
 * and its entry export called as it is — the SDK's kernel instance and call
 * bookkeeping would serve nothing. Runs calls and turns every way a call can
 * end into a {@linkcode RunResult}.
 *
 * @module
 */
import { runFailure } from "../../core/runtime/failure.ts";
import type { RunResult } from "../../core/runtime/types.ts";
import { type ExtismContext, extismOverrides, shieldKernel } from "../extism/_extism.ts";
import { hookboxFunctions } from "../_hookbox.ts";
import { type CallSetup, GuestHost } from "../_host.ts";
import type { HttpSession, HttpSetup } from "../http/_http.ts";
import { throwStop } from "./_halt.ts";
import type { LoadedPlugin } from "../_loader.ts";
import type { PluginAbi } from "../_abi.ts";
import { classify, exited } from "../_outcome.ts";
import { atAuthorLines } from "../_lines.ts";
import { createForegroundPlugin, type HostNamespaces, type SdkPlugin } from "../extism/_sdk.ts";
import { blockMap, type ImageMemoryFn, Snapshot, type SnapshotImage } from "./_snapshot.ts";
import { wasiFunctions } from "../wasi/_wasi.ts";
import { blockMapPages, HOOKBOX_EXPORTS } from "../../rewriter/mod.ts";

type ExtismPlugin = SdkPlugin;

const NO_INPUT = new Uint8Array(0);

/** A live plugin instance; warm ones are reset from a snapshot before each call. */
export class PluginInstance {
  /** False once a call failed: the pool must not reuse it. */
  reusable = true;
  busy = false;
  /** The SDK's plugin, for a module that can reach the Extism kernel; else null. */
  readonly #plugin: ExtismPlugin | null;
  readonly #host: GuestHost;
  readonly #ctx: ExtismContext | null;
  readonly #loaded: LoadedPlugin;
  readonly #rc: WebAssembly.Global | null;
  readonly #instance: WebAssembly.Instance;
  /** `[module, export]`: the two-element form skips the SDK's per-call export scan. */
  readonly #target: [string, string];
  readonly #http: HttpSession | null;
  /**
   * The entry export, called as it is when the module cannot reach the
   * Extism kernel (a WASI command that imports none of it).
   */
  readonly #direct: (() => unknown) | null;
  #snapshot: Snapshot | null = null;
  #dirty = false;
  /** The block map the host made for it (a shared module's), else null. */
  #importedMap: WebAssembly.Memory | null = null;
  #closed = false;
  /**
   * Called once when the instance closes, with the memories it no longer
   * needs (see {@linkcode Retired}): the runtime pools them.
   */
  onClose: ((retired: Retired) => void) | null = null;

  private constructor(
    plugin: ExtismPlugin | null,
    host: GuestHost,
    ctx: ExtismContext | null,
    loaded: LoadedPlugin,
    instance: WebAssembly.Instance,
    http: HttpSession | null,
  ) {
    this.#plugin = plugin;
    this.#http = http;
    this.#host = host;
    this.#ctx = ctx;
    this.#loaded = loaded;
    this.#instance = instance;
    this.#target = ["0", loaded.entry];
    const exports = instance.exports;
    const entry = exports[loaded.entry];
    // No SDK plugin: the entry is an exported function (create checked it).
    this.#direct = plugin === null ? entry as () => unknown : null;
    const memory = exports[HOOKBOX_EXPORTS.memory];
    const fuel = exports[HOOKBOX_EXPORTS.fuel];
    const rc = exports[HOOKBOX_EXPORTS.rc];
    host.memory = memory instanceof WebAssembly.Memory ? memory : null;
    host.blockMap = host.memory === null ? null : blockMap(instance);
    host.meter.attach(fuel instanceof WebAssembly.Global ? fuel : null);
    this.#rc = rc instanceof WebAssembly.Global ? rc : null;
  }

  /**
   * Instantiates `loaded`. `setup` bounds the start function and `_initialize`.
   * `trap` stops a guest that may catch exceptions; others get `throwStop`.
   * `http` serves Extism HTTP (worker mode only). Resolves to a RunResult
   * instead when instantiation itself fails.
   */
  static async create(
    loaded: LoadedPlugin,
    trap: () => never,
    setup: CallSetup & HttpSetup,
    http: HttpSession | null = null,
    memory: WebAssembly.Memory | null = null,
    maps: ((pages: number) => WebAssembly.Memory) | null = null,
  ): Promise<PluginInstance | RunResult> {
    const host = new GuestHost(loaded.exceptionHandling ? trap : throwStop);
    // Start functions and `_initialize` run before any event: they see none,
    // so a warm snapshot taken after them holds nothing of a caller's.
    const init = { ...setup, input: NO_INPUT };
    host.begin(init);
    http?.begin(init);
    let ctx: ExtismContext | null = null;
    // Host functions for what the module imports only: a WASI command that
    // imports nothing of the Extism kernel cannot call it, so the kernel is
    // neither overridden nor shielded for it (a fresh instance builds less).
    const imported = importedNames(loaded.module);
    const kernel = reachesKernel(loaded.module, loaded.abi);
    const map = imported.get("hookbox")?.has("blocks") ? blockMapFor(loaded, maps) : null;
    const functions: HostNamespaces = {
      "wasi_snapshot_preview1": wasiFunctions(host, imported.get(WASI) ?? NOTHING),
      "hookbox": {
        ...hookboxFunctions(host, (c) => {
          ctx = c;
          if (kernel) shieldKernel(host, c, new Set(Object.keys(functions[EXTISM_KERNEL] ?? {})));
        }),
        ...(loaded.memoryImport ? { memory: memoryImport(loaded, memory) } : {}),
        ...(map !== null ? { blocks: importValue(map) } : {}),
      },
    };
    if (kernel) functions[EXTISM_KERNEL] = extismOverrides(host, http);
    // Without the kernel and with its entry exported, no SDK: the same
    // imports, bound as the SDK binds them, on a plain instance.
    const direct = !kernel && exportsFunction(loaded.module, loaded.entry);
    try {
      let plugin: ExtismPlugin | null = null;
      let instance: WebAssembly.Instance;
      if (direct) {
        instance = await WebAssembly.instantiate(loaded.module, bindLikeSdk(functions));
      } else {
        plugin = await createForegroundPlugin(loaded.module, functions);
        if (ctx === null) throw new Error("@extism/extism did not bind host functions as expected");
        instance = await plugin.getInstance();
      }
      const self = new PluginInstance(plugin, host, ctx, loaded, instance, http);
      self.#importedMap = map;
      const init = instance.exports._initialize;
      if (typeof init === "function") {
        if (plugin === null) (init as () => unknown)();
        else await plugin.callBlock(["0", "_initialize"], null);
      }
      return self;
    } catch (err) {
      if (err instanceof WebAssembly.LinkError || err instanceof WebAssembly.CompileError) {
        const failure = runFailure("INSTANTIATE_FAILED", err.message);
        return { exitCode: null, stdout: "", stderr: "", failure };
      }
      return classify(err, host);
    }
  }

  /** The instance's linear memory (what a fresh instance gives back for reuse). */
  get memory(): WebAssembly.Memory | null {
    return this.#host.memory;
  }

  /** Bytes this instance holds: its linear memory, its block map and its snapshot's own copy, if any. */
  get byteLength(): number {
    return (this.#host.memory?.buffer.byteLength ?? 0) + (this.#host.blockMap?.byteLength ?? 0) +
      (this.#snapshot?.byteLength ?? 0);
  }

  /** The instance marks the memory it writes (its plugin was instrumented to). */
  get tracksWrites(): boolean {
    return blockMap(this.#instance) !== null;
  }

  /**
   * Takes the warm snapshot (after `_initialize`), sharing `image` when it is
   * the same; with `restoreModule` (the restorer), a tracked instance restores
   * only the blocks a call wrote.
   */
  snapshot(
    image: SnapshotImage | null = null,
    restoreModule: WebAssembly.Module | null = null,
    newImage: ImageMemoryFn | null = null,
  ): SnapshotImage {
    // A memory that starts as exactly its image restores from the image's layers, if it has them.
    const loaded = this.#loaded;
    const layers = loaded.pristineImage ? loaded.image?.layers?.() ?? null : null;
    this.#snapshot = Snapshot.take(this.#instance, image, restoreModule, newImage, layers);
    return this.#snapshot.image;
  }

  /** Runs one call, reporting the fuel it used. Never throws for guest misbehaviour. */
  async call(setup: CallSetup & HttpSetup): Promise<RunResult> {
    const host = this.#host;
    if (this.#dirty) this.#snapshot?.restore();
    this.#dirty = true;
    host.begin(setup);
    this.#http?.begin(setup);
    let result: RunResult;
    try {
      if (this.#direct !== null) {
        this.#direct();
      } else {
        await this.#plugin!.reset();
        const input = this.#loaded.abi === "extism" ? this.#storeInput(setup.input) : null;
        await this.#plugin!.callBlock(this.#target, input);
      }
      // A halt the guest swallowed (it caught the stop) still ends the call.
      if (host.halted !== null) this.reusable = false;
      result = host.halted !== null
        ? classify(null, host)
        : exited(host, this.#rc === null ? 0 : Number(this.#rc.value));
    } catch (err) {
      result = classify(err, host);
    }
    if (result.failure !== undefined || this.#snapshot?.grown) this.reusable = false;
    atAuthorLines(this.#loaded, result);
    result.fuel = host.meter.used();
    return result;
  }

  /**
   * Releases the SDK plugin, if there is one, and hands what it held to
   * {@linkcode onClose}. Never called again after.
   */
  async close(): Promise<void> {
    this.reusable = false;
    if (this.#closed) return;
    this.#closed = true;
    await this.#plugin?.close();
    this.onClose?.({
      memory: this.#host.memory,
      map: this.#importedMap,
      image: this.#snapshot?.release() ?? null,
    });
  }

  #storeInput(input: Uint8Array): number {
    // A private copy (Extism blocks are writable by the guest), shared by the
    // SDK's input block and our `input_load_*` fast path.
    const copy = input.slice();
    this.#host.setInput(copy);
    return Number(this.#ctx!.store(copy) >> 48n);
  }
}

const WASI = "wasi_snapshot_preview1";
const EXTISM_KERNEL = "extism:host/env";
const NOTHING: ReadonlySet<string> = new Set();
/** What a compiled module imports (names by namespace) and which functions it exports. */
interface ModuleShape {
  imports: Map<string, Set<string>>;
  functions: Set<string>;
}
const shapes = new WeakMap<WebAssembly.Module, ModuleShape>();

/** `module`'s {@linkcode ModuleShape}, read once per compiled module. */
function shapeOf(module: WebAssembly.Module): ModuleShape {
  let shape = shapes.get(module);
  if (shape === undefined) {
    shape = { imports: new Map(), functions: new Set() };
    for (const { module: namespace, name } of WebAssembly.Module.imports(module)) {
      let set = shape.imports.get(namespace);
      if (set === undefined) shape.imports.set(namespace, set = new Set());
      set.add(name);
    }
    for (const e of WebAssembly.Module.exports(module)) {
      if (e.kind === "function") shape.functions.add(e.name);
    }
    shapes.set(module, shape);
  }
  return shape;
}

/** True when `module` exports a function named `name`. */
function exportsFunction(module: WebAssembly.Module, name: string): boolean {
  return shapeOf(module).functions.has(name);
}

/**
 * Whether a plugin is loaded through `@extism/extism` (as `PluginInstance`
 * decides: it can reach the Extism kernel, or does not export its entry as a
 * function); every other one is a plain instance. `hookbox bundle` leaves the
 * SDK out of a Worker none of whose plugins needs it.
 */
export function loadsThroughSdk(
  module: WebAssembly.Module,
  abi: PluginAbi,
  entry: string,
): boolean {
  return reachesKernel(module, abi) || !exportsFunction(module, entry);
}

/** True when a plugin can reach the Extism kernel: the Extism ABI, or a kernel import. */
function reachesKernel(module: WebAssembly.Module, abi: PluginAbi): boolean {
  return abi === "extism" || importedNames(module).has(EXTISM_KERNEL);
}

/**
 * The import object the SDK would build from `functions`: it binds every
 * value it is given as `value.bind(null, context)` — host functions get the
 * call context first (our functions ignore or drop it), and the memory
 * import answers with the memory (see {@linkcode memoryImport}). Without the
 * SDK there is no context: null.
 */
function bindLikeSdk(functions: HostNamespaces): WebAssembly.Imports {
  const imports: WebAssembly.Imports = {};
  for (const [namespace, members] of Object.entries(functions)) {
    const bound: Record<string, WebAssembly.ImportValue> = {};
    for (const [name, value] of Object.entries(members)) {
      bound[name] = value.bind(null, null) as WebAssembly.ImportValue;
    }
    imports[namespace] = bound;
  }
  return imports;
}

/** The names `module` imports, by namespace. */
function importedNames(module: WebAssembly.Module): Map<string, Set<string>> {
  return shapeOf(module).imports;
}

/** What a closed instance no longer needs, for the runtime to pool. */
export interface Retired {
  /** Its linear memory (imported or its own). */
  memory: WebAssembly.Memory | null;
  /** The block map the host made for it, if any. */
  map: WebAssembly.Memory | null;
  /** Its snapshot's image memory, when no other snapshot uses it. */
  image: WebAssembly.Memory | null;
}

/**
 * The block map of a tracked plugin that imports its memory (a shared JS
 * engine, warm): one byte per 256-byte block up to the cap of the memory the
 * host hands it, zeroed: from `maps` (a pool) or new.
 */
function blockMapFor(
  loaded: LoadedPlugin,
  maps: ((pages: number) => WebAssembly.Memory) | null,
): WebAssembly.Memory {
  const pages = blockMapPages(loaded.memoryImport?.max ?? 0);
  const map = maps?.(pages) ?? null;
  return map !== null && map.buffer.byteLength === pages * 65536
    ? map
    : new WebAssembly.Memory({ initial: pages, maximum: pages });
}

/**
 * A memory as an import value that survives the SDK's binding (see
 * {@linkcode memoryImport}). Typed as a host function because that is the
 * map's type; only `bind` is ever used.
 */
function importValue(memory: WebAssembly.Memory): (...args: unknown[]) => unknown {
  return { bind: () => memory } as unknown as (...args: unknown[]) => unknown;
}

/**
 * The memory import of a plugin that imports its memory: `memory`, else a
 * new one of the declared size, with the plugin's image written into it. @extism/extism binds every import it is given
 * as a host function (`f.bind(null, context)`); this value answers that call
 * with the memory itself, so the instance imports it as it is.
 */
function memoryImport(
  loaded: LoadedPlugin,
  memory: WebAssembly.Memory | null,
): (...args: unknown[]) => unknown {
  const limits = loaded.memoryImport!;
  const value = memory ?? new WebAssembly.Memory({ initial: limits.min, maximum: limits.max });
  // Written before instantiation, as the module's own data segments would be.
  loaded.image?.write(new Uint8Array(value.buffer));
  return importValue(value);
}
