/**
 * Turns a hook's entry into plugin bytes: reads `.wasm` files as they are,
 * compiles JS/TS (QuickJS engine plugin) and AssemblyScript sources, each cached
 * on disk by content hash. The compilers load lazily, so a host that only runs
 * `.wasm` plugins never pays for esbuild or asc.
 *
 * @module
 */
import { HookboxError } from "../core/errors.ts";
import type { HookDefinition } from "../core/hook/types.ts";
import { confined, MAX_PLUGIN_BYTES, MAX_SOURCE_BYTES } from "../core/hook/files.ts";
import { denoFs, readCappedFile } from "../host-deno/fs.ts";
import { defaultCacheDir } from "../host-deno/cache_dir.ts";
import { sha256HexInPieces } from "../host-deno/sha256.ts";

/** A compiled (or read) plugin. */
export interface CompiledPlugin {
  /** The plugin's WebAssembly bytes. */
  bytes: Uint8Array;
  /** Hex SHA-256 of `bytes`. */
  sha256: string;
  /** True when a compiler's cache answered. Always true for `.wasm` entries. */
  cached: boolean;
}

/** Options of {@linkcode compileHook}. */
export interface CompileHookOptions {
  /** Where compiled plugins are cached. @default defaultCacheDir() */
  cacheDir?: string;
}

export { defaultCacheDir } from "../host-deno/cache_dir.ts";
export { BUILD_BUDGET_MS } from "./_build_time.ts";
import { buildTime } from "./_build_time.ts";

/**
 * Bounds the building time of this process's JS hooks from now on (an agent's
 * hook call, the daemon): past {@linkcode BUILD_BUDGET_MS}, refilled 12 s a
 * minute, a hook not built yet fails at once and a later call builds it.
 */
export function boundBuildTime(): void {
  buildTime.bound();
}
export { withBuildTimeOf } from "./_build_time.ts";
export { runCommand } from "./_js_toolchain.ts";

/** Plugin bytes for a WebAssembly-runtime hook; throws `COMPILE_*` / `TOOLCHAIN_MISSING`. */
export async function compileHook(
  hook: HookDefinition,
  options: CompileHookOptions = {},
): Promise<CompiledPlugin> {
  const { entry } = hook;
  if (entry.runtime !== "wasm") {
    throw new HookboxError("COMPILE_FAILED", `hook "${hook.name}" has no WebAssembly entry`, {
      path: hook.dir,
    });
  }
  const cacheDir = options.cacheDir ?? defaultCacheDir();
  // Checked again here, not only at discovery: the folder may have changed since.
  const real = await confined(denoFs, hook.dir, entry.path);
  if (entry.format !== "wasm") await readCappedFile(real, MAX_SOURCE_BYTES); // size check only
  if (entry.format === "js") {
    const { compileJsHook } = await import("./js.ts");
    return await compileJsHook(real, { cacheDir, allowedRoots: await jsRoots(hook.dir) });
  }
  if (entry.format === "as") {
    const { compileAsHook } = await import("./as.ts");
    return await compileAsHook(real, { cacheDir });
  }
  const bytes = await readCappedFile(real, MAX_PLUGIN_BYTES);
  return { bytes, sha256: await sha256HexInPieces(bytes), cached: true };
}

/**
 * A name for the plugin bytes {@linkcode compileHook} would return for
 * `hook`, found without compiling or reading the plugin (`js:KEY`, `as:KEY`:
 * the compile cache's key, which fixes the bytes), or null when the compile
 * caches do not know it yet or the entry is a `.wasm` file (read as it is).
 */
export async function cachedPluginId(
  hook: HookDefinition,
  options: CompileHookOptions = {},
): Promise<string | null> {
  const { entry } = hook;
  if (entry.runtime !== "wasm" || entry.format === "wasm") return null;
  const cacheDir = options.cacheDir ?? defaultCacheDir();
  const real = await confined(denoFs, hook.dir, entry.path);
  await readCappedFile(real, MAX_SOURCE_BYTES); // size check only
  if (entry.format === "js") {
    const { cachedJsKey } = await import("./js.ts");
    const key = await cachedJsKey(real, { cacheDir, allowedRoots: await jsRoots(hook.dir) });
    return key === null ? null : `js:${key}`;
  }
  const { cachedAsKey } = await import("./as.ts");
  const key = await cachedAsKey(real, { cacheDir });
  return key === null ? null : `as:${key}`;
}

/** A JS hook may import its own folder's files (real path) and hookbox's plugins/ library. */
async function jsRoots(hookDir: string): Promise<string[]> {
  const library = new URL("../../plugins", import.meta.url).pathname;
  return [await Deno.realPath(hookDir), await Deno.realPath(library).catch(() => library)];
}

// Types the exports above refer to.
export type { HookDefinition, HookEntry, HookLevel, WasmFormat } from "../core/hook/types.ts";
export type { EventType } from "../core/schema/event_types.ts";
export { EVENT_TYPES } from "../core/schema/event_types.ts";
export type { Manifest, ManifestLimits } from "../core/schema/manifest.ts";
export type { CommandLimits, CommandOutput } from "./_js_toolchain.ts";
