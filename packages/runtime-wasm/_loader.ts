/**
 * Loading a plugin: size cap, SHA-256 pin on the original bytes, import
 * policy, ABI detection, instrumentation (memory cap, fuel metering, failed
 * grows reported, write tracking, return capture, exported globals), then
 * compilation cached by the SHA-256 of the instrumented bytes. Every refusal
 * is a `HookboxError` with a stable code.
 *
 * @module
 */
import { HookboxError, isHookboxError } from "../core/errors.ts";
import {
  inspectModule,
  instrumentModule,
  type InstrumentOptions,
  MAX_TABLE_ENTRIES,
  type ModuleInfo,
  type SplitData,
  splitData,
  TABLE_ENTRY_BYTES,
} from "../rewriter/mod.ts";
import { CAPTURED_HOOK, detectAbi, type PluginAbi } from "./_abi.ts";
import { type CompileFn, PromiseCache, sha256Hex, type ValueCache } from "./_cache.ts";
import { FUEL_SLICE } from "./_fuel.ts";
import { checkImports } from "./_policy.ts";
import { LINES_SECTION } from "../core/runtime/lines.ts";

/**
 * Write tracking pays off from this initial memory size (64 KiB pages) up:
 * below it, copying the whole snapshot back usually costs less than marking
 * every store (an AssemblyScript guard starts at 1 page and stores a lot, the
 * JS engine at 16+) — unless the module is tiny ({@linkcode TRACK_MAX_TINY}).
 */
export const TRACK_MIN_PAGES = 4;
/**
 * A module of at most this many bytes is tracked whatever its memory: so
 * little code stores little, and restoring a few blocks beats copying even
 * one whole 64 KiB page back (a hand-written WASI guard: 11 → 9.8 µs a call).
 */
export const TRACK_MAX_TINY = 4096;

/**
 * Whether this engine compiles modules with two memories (write tracking keeps
 * its block map in a second memory). V8 before 12.0 — Node 20 — does not: warm
 * instances there restore their whole memory instead of the pages written.
 */
export const MULTI_MEMORY: boolean = WebAssembly.validate(
  new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 5, 5, 2, 0, 0, 0, 0]),
);

/** Limits that shape loading and instrumentation. */
export interface LoadLimits {
  memoryMb: number;
  moduleKb: number;
}

/** A plugin ready to instantiate. */
export interface LoadedPlugin {
  /** The plugin's calling convention. */
  abi: PluginAbi;
  /** Export the host calls: `__hookbox_call_hook` (Extism-native) or `_start`. */
  entry: string;
  /** The compiled, instrumented module. */
  module: WebAssembly.Module;
  /** SHA-256 of the original bytes (what a HOOK.md `sha256` pin names). */
  sha256: string;
  /** SHA-256 of the instrumented bytes (the compile cache key). */
  instrumentedSha256: string;
  /**
   * Bytes of the instrumented module: what a runtime's cap on the plugins it
   * keeps loaded counts (compiled, a module holds several times this).
   * Absent: not counted. An edge bundle gives a plugin of a shared module the
   * bytes of its own runs instead: a Worker compiles every module it
   * declares at start, whatever it loads later.
   */
  byteLength?: number;
  /** What the host may keep for one call (Extism blocks, variables, HTTP bodies), bytes. */
  hostBytes: number;
  /**
   * The module may catch exceptions, so the host must stop it with a real
   * trap; an EH-free module is stopped with a (cheaper) JS exception.
   */
  exceptionHandling: boolean;
  /**
   * The module imports its memory as `hookbox.memory` with these limits
   * (pages): the host supplies a memory of exactly this initial size. Absent
   * when the module defines its own.
   */
  memoryImport?: { min: number; max: number };
  /**
   * With `memoryImport`: the byte ranges `[from, to)` instantiation writes
   * (the active data segments). A reused memory is zeroed outside them only;
   * absent, it is zeroed whole.
   */
  dataRanges?: readonly (readonly [number, number])[];
  /**
   * What the memory starts with, when the host writes it rather than the
   * module's data segments ({@linkcode PrepareContext.shareCode}): written
   * into the imported memory before instantiation.
   */
  image?: MemoryImage;
  /**
   * A JS hook's line table (`hookbox.lines`) when its module, shared, was
   * made without it.
   */
  lines?: string;
  /**
   * With `image`: instantiation writes nothing else into the memory (no
   * start function, no `_initialize`), so an instance's memory starts as
   * exactly the image.
   */
  pristineImage?: boolean;
}

/** A plugin's initial memory contents, written by the host. */
export interface MemoryImage {
  /** Writes the contents into `memory` (zeroed, at least the plugin's initial size). */
  write(memory: Uint8Array): void;
  /**
   * `write` sets every byte of the memory it is given, so that memory need
   * not be zeroed first (a memory another plugin of the module used).
   */
  readonly overwrites?: boolean;
  /**
   * The contents as a base shared with other plugins, in a memory of its
   * own, and this plugin's runs over it (an edge bundle's images); absent
   * when the image is not made that way. A warm instance of a plugin whose
   * memory starts as exactly its image (`pristineImage`) restores from these
   * instead of a copy of its own.
   */
  layers?(): ImageLayers;
}

/** A base every plugin of a module shares and one plugin's runs over it (`MemoryImage.layers`). */
export interface ImageLayers {
  /** The base, read-only (never written after it is made). */
  readonly base: WebAssembly.Memory;
  /** Bytes of `base` that are the base's (the rest of its last page is zeros). */
  readonly baseLength: number;
  /** The plugin's runs: `[offset, bytes]`, sorted, disjoint. */
  readonly runs: readonly (readonly [number, Uint8Array])[];
}

/** An image made of runs of `[offset, bytes]` (`SplitData.runs`). */
export interface RunsImage extends MemoryImage {
  /** `[offset, bytes]`: sorted, disjoint. */
  readonly runs: readonly (readonly [number, Uint8Array])[];
}

/** The image of `runs`. */
export function runsImage(runs: readonly (readonly [number, Uint8Array])[]): RunsImage {
  return { runs, write: (memory) => runs.forEach(([offset, bytes]) => memory.set(bytes, offset)) };
}

/**
 * Largest memory an instrumented module shared by several plugins declares,
 * pages (4 GiB): each plugin's own cap is the maximum of the memory the host
 * hands it.
 */
export const SHARED_MAX_PAGES = 65536;

/** Everything {@linkcode prepare} needs besides the bytes. */
export interface PrepareContext {
  /** Benchmarks only: instrument without fuel metering. @default true */
  meterFuel?: boolean;
  /**
   * Track written pages, so a warm instance restores only those (fresh
   * instances are never restored and skip the cost); only for memories that
   * start at {@linkcode TRACK_MIN_PAGES} or more, or tiny modules. @default false
   */
  trackWrites?: boolean;
  /**
   * With `shareCode`: track writes in the shared module (its block map
   * imported too), so that its warm instances restore only what a call
   * wrote. One module serves either way, so a set of plugins that must share
   * one (a bundle's JS hooks, fresh and warm) passes the same value for all.
   * @default trackWrites
   */
  trackShared?: boolean;
  /**
   * Import the memory instead of defining it (fresh instances: the host hands
   * each one a zeroed memory it already has, see `_memories.ts`). @default false
   */
  importMemory?: boolean;
  /**
   * Share the instrumented module with every plugin that differs from this
   * one only in the data its memory starts with (JS hooks: one QuickJS
   * engine, each with its script's snapshot): the module is instrumented
   * without that data and with no memory cap of its own, and the plugin gets
   * its data as `image` and its cap as the maximum of the memory the host
   * hands it. Not for modules it does not apply to (see `splitData`) or whose
   * tables the cap limits: those load as without it. @default false
   */
  shareCode?: boolean;
  limits: LoadLimits;
  /** Receives the instrumented bytes (compiled or found compiled in `modules`). */
  keepBytes?: (bytes: Uint8Array) => void;
  pin?: string | undefined;
  path?: string | undefined;
  compile: CompileFn;
  modules: ValueCache<WebAssembly.Module>;
}

/** Shared modules instrumented, by skeleton and what shapes the instrumentation. */
const SHARED = new PromiseCache<ReturnType<typeof instrumentModule>>(4);

/** Validates, instruments and compiles plugin bytes. Throws `HookboxError`. */
export async function prepare(bytes: Uint8Array, ctx: PrepareContext): Promise<LoadedPlugin> {
  const where = ctx.path === undefined ? {} : { path: ctx.path };
  if (bytes.byteLength > ctx.limits.moduleKb * 1024) {
    const msg = `module is ${bytes.byteLength} bytes, over the ${ctx.limits.moduleKb} KiB cap`;
    throw new HookboxError("LIMIT_MODULE", msg, { ...where, field: "module_kb" });
  }
  const sha256 = await sha256Hex(bytes);
  if (ctx.pin !== undefined && ctx.pin !== sha256) {
    const msg = `plugin SHA-256 is ${sha256}, the manifest pins ${ctx.pin}`;
    throw new HookboxError("PLUGIN_HASH_MISMATCH", msg, { ...where, field: "sha256" });
  }
  const info = guard(() => inspectModule(bytes), ctx.path);
  checkImports(info.imports, ctx.path);
  const abi = detectAbi(info.exports, ctx.path);
  if (info.memories.length > 1) {
    const msg = `module defines ${info.memories.length} memories; a plugin may have one`;
    throw new HookboxError("PLUGIN_FEATURE_DENIED", msg, where);
  }
  const { memoryPages, tableEntries, hostBytes } = splitBudget(info, ctx.limits.memoryMb, abi);
  const options = {
    meterFuel: ctx.meterFuel ?? true,
    initialFuel: FUEL_SLICE,
    exportGlobals: true,
    signalGrowFailure: true,
    captureReturn: abi === "extism" ? ["hook"] : [],
  };
  const made: ReturnType<typeof instrumentModule> & { split?: SplitData } =
    (ctx.shareCode ? await sharedModule(bytes, ctx, memoryPages, tableEntries, options) : null) ??
      guard(() =>
        instrumentModule(bytes, {
          ...options,
          memoryPages,
          tableEntries,
          trackWrites: (ctx.trackWrites ?? false) && MULTI_MEMORY &&
            ((info.memories[0]?.min ?? 0) >= TRACK_MIN_PAGES || bytes.byteLength <= TRACK_MAX_TINY),
          importMemory: ctx.importMemory ?? false,
        }), ctx.path);
  const { bytes: instrumented, report } = made;
  ctx.keepBytes?.(instrumented);
  const instrumentedSha256 = await sha256Hex(instrumented);
  const module = await ctx.modules.get(
    instrumentedSha256,
    () => guardAsync(() => ctx.compile(instrumented, instrumentedSha256), ctx.path),
  );
  const entry = abi === "extism" ? CAPTURED_HOOK : "_start";
  const split = made.split ?? null;
  return {
    abi,
    entry,
    module,
    sha256,
    instrumentedSha256,
    byteLength: instrumented.byteLength,
    hostBytes,
    exceptionHandling: report.exceptionHandling,
    ...(split === null
      ? {
        ...(report.memoryImport ? { memoryImport: report.memoryImport } : {}),
        ...(report.dataRanges ? { dataRanges: report.dataRanges } : {}),
      }
      : {
        // The plugin's own initial size, and its cap as the memory's maximum.
        memoryImport: {
          min: split.pages,
          max: Math.min(
            memoryPages,
            split.maxPages ?? SHARED_MAX_PAGES,
            made.report.memoryImport!.max,
          ),
        },
        image: runsImage(split.runs),
        ...(abi !== "extism" && !info.hasStart &&
            !info.exports.some((e) => e.name === "_initialize")
          ? { pristineImage: true }
          : {}),
        ...(split.custom[LINES_SECTION]
          ? { lines: new TextDecoder().decode(split.custom[LINES_SECTION]) }
          : {}),
      }),
  };
}

/**
 * The instrumented module `bytes` shares with every plugin that differs from
 * it only in its data (`PrepareContext.shareCode`), and the split it came
 * from; null when that does not apply (the plugin then gets a module of its
 * own) or the plugin's memory starts past its cap.
 */
async function sharedModule(
  bytes: Uint8Array,
  ctx: PrepareContext,
  memoryPages: number,
  tableEntries: number,
  options: Omit<InstrumentOptions, "memoryPages">,
): Promise<(ReturnType<typeof instrumentModule> & { split: SplitData }) | null> {
  const split = guard(() => splitData(bytes, [LINES_SECTION]), ctx.path);
  if (split === null || split.pages > memoryPages) return null;
  // Warm instances track their writes: the block map is imported too, sized
  // by each plugin's cap, and the module's memory stays under 4 GiB so that
  // the end of a write's range never wraps (see `_writes.ts`).
  const track = (ctx.trackShared ?? ctx.trackWrites ?? false) && MULTI_MEMORY &&
    split.pages >= TRACK_MIN_PAGES;
  // Every JS hook has the same skeleton: instrumented once, not once per hook.
  const key = `${await sha256Hex(split.skeleton)}:${tableEntries}:${track}:${
    JSON.stringify(options)
  }`;
  const made = await SHARED.get(
    key,
    () =>
      Promise.resolve(guard(() =>
        instrumentModule(split.skeleton, {
          ...options,
          memoryPages: track ? SHARED_MAX_PAGES - 1 : SHARED_MAX_PAGES,
          tableEntries,
          importMemory: true,
          trackWrites: track,
        }), ctx.path)),
  );
  return made.report.memoryImport ? { ...made, split } : null;
}

const MIB = 1024 * 1024;
/** Entries a table that declares no maximum may grow by. */
const TABLE_GROWTH = 1024;

/** How one plugin's memory budget is split. */
export interface BudgetSplit {
  /** Cap on the linear memory, pages. */
  memoryPages: number;
  /** Cap on all table entries. */
  tableEntries: number;
  /** Cap on what the host keeps for a call, bytes. */
  hostBytes: number;
}

/**
 * Splits the memory budget so that everything a plugin can make the host
 * hold stays within it: tables get what they declare (up to half the budget,
 * at {@linkcode TABLE_ENTRY_BYTES} each); an Extism-native plugin, whose
 * blocks and variables live host-side, gets a quarter of the rest for those;
 * linear memory gets the remainder in whole pages. Too little for a table's or
 * the memory's minimum is a `LIMIT_MEMORY` refusal from the rewriter.
 */
export function splitBudget(
  info: Pick<ModuleInfo, "tables">,
  memoryMb: number,
  abi: PluginAbi,
): BudgetSplit {
  const budget = memoryMb * MIB;
  const declared = info.tables.reduce((sum, t) => sum + (t.max ?? t.min + TABLE_GROWTH), 0);
  const tableEntries = Math.min(
    declared,
    MAX_TABLE_ENTRIES,
    Math.floor(budget / 2 / TABLE_ENTRY_BYTES),
  );
  const rest = budget - tableEntries * TABLE_ENTRY_BYTES;
  const memoryPages = Math.floor((abi === "extism" ? rest * 0.75 : rest) / 65536);
  return { memoryPages, tableEntries, hostBytes: rest - memoryPages * 65536 };
}

function invalid(err: unknown, path: string | undefined): HookboxError {
  if (isHookboxError(err)) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new HookboxError("PLUGIN_INVALID", message, {
    ...(path === undefined ? {} : { path }),
    cause: err,
  });
}

function guard<T>(fn: () => T, path: string | undefined): T {
  try {
    return fn();
  } catch (err) {
    throw invalid(err, path);
  }
}

async function guardAsync<T>(fn: () => Promise<T>, path: string | undefined): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw invalid(err, path);
  }
}
