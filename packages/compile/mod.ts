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
import { denoFs, fileSignature, readCappedFile } from "../host-deno/fs.ts";
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
import { BUILD_BUDGET_MS, buildTime, OUT_OF_BUDGET } from "./_build_time.ts";

/**
 * Bounds the building time of this process's hooks from now on (an agent's
 * hook call, the daemon) to `ms`, refilled that much a minute: past it a
 * hook not built yet fails at once, and its build goes on in a process of its
 * own for a later call (0: every build is handed over so).
 */
export function boundBuildTime(ms: number = BUILD_BUDGET_MS): void {
  buildTime.bound(ms);
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
  if (entry.format === "wasm") {
    const bytes = await readCappedFile(real, MAX_PLUGIN_BYTES);
    return { bytes, sha256: await sha256HexInPieces(bytes), cached: true };
  }
  const source = await readCappedFile(real, MAX_SOURCE_BYTES);
  const building = { dir: hook.dir, cacheDir, source };
  unfinished.add(building);
  try {
    if (entry.format === "js") {
      const { compileJsHook } = await import("./js.ts");
      return await compileJsHook(real, { cacheDir, allowedRoots: await jsRoots(hook.dir) });
    }
    const { compileAsHook } = await import("./as.ts");
    return await compileAsHook(real, { cacheDir });
  } catch (err) {
    if (!(err instanceof HookboxError) || err.cause !== OUT_OF_BUDGET) throw err;
    throw new HookboxError(
      "COMPILE_FAILED",
      `${err.message}; ${await handOver(hook.dir, cacheDir, source)}`,
      { path: hook.dir, cause: OUT_OF_BUDGET },
    );
  } finally {
    unfinished.delete(building);
  }
}

/** The builds {@linkcode compileHook} has under way, by hook folder, cache and entry source. */
const unfinished = new Set<{ dir: string; cacheDir: string; source: Uint8Array }>();

/**
 * Hands over the builds still under way (a hook call whose event deadline
 * passed while it built), for a one-shot process about to exit, which kills
 * them: each goes on in the background as a build past the building time
 * does (one at a time per hooks folder).
 */
export async function handOverUnfinished(): Promise<void> {
  for (const { dir, cacheDir, source } of unfinished) await handOver(dir, cacheDir, source);
}

/**
 * What becomes of a build stopped for want of building time: in a process
 * that answers agents it goes on in a process of its own (`_build_later.ts`).
 */
async function handOver(dir: string, cacheDir: string, source: Uint8Array): Promise<string> {
  if (!buildTime.bounded) return "try again";
  const text = new TextDecoder().decode(source);
  const { buildLater } = await import("./_build_later.ts");
  if (await buildLater(dir, cacheDir, text)) {
    return "it is being built in the background (`hookbox compile`) for a later call";
  }
  return `a later call builds it, or build it once with \`hookbox compile ${dir}\``;
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
  const memo = `${cacheDir}\0${hook.dir}\0${entry.format}\0${real}`;
  const known = named.get(memo);
  if (known !== undefined && signatures(known.files, Infinity) === known.seen) {
    named.delete(memo);
    named.set(memo, known);
    return known.id;
  }
  await readCappedFile(real, MAX_SOURCE_BYTES); // size check only
  let found: { key: string; files: string[] } | null;
  if (entry.format === "js") {
    const { cachedJsKey } = await import("./js.ts");
    found = await cachedJsKey(real, { cacheDir, allowedRoots: await jsRoots(hook.dir) });
  } else {
    const { cachedAsKey } = await import("./as.ts");
    found = await cachedAsKey(real, { cacheDir });
  }
  if (found === null) return null;
  const id = `${entry.format}:${found.key}`;
  const files = [real, ...found.files];
  const seen = signatures(files, Date.now() - RACY_MS);
  named.delete(memo);
  if (seen !== null) {
    if (named.size >= NAMED_KEPT) named.delete(named.keys().next().value!);
    named.set(memo, { files, seen, id });
  }
  return id;
}

/**
 * Plugin ids {@linkcode cachedPluginId} worked out in this process, kept
 * while every file they were worked out from keeps its signature (size,
 * times, inode, device; any write changes the change time): a process that
 * loads the same hooks again and again (the daemon, once per call) neither
 * reads nor hashes their sources, the library or the plugin again.
 */
const named = new Map<string, { files: string[]; seen: string; id: string }>();
/** Ids kept at most. */
const NAMED_KEPT = 256;
/**
 * A file changed this recently is not trusted to its signature (time stamps
 * can be coarse): such an id is worked out again next time.
 */
const RACY_MS = 2000;

/** The signatures of `files`, or null if one is missing or changed at or after `notAfter`. */
function signatures(files: readonly string[], notAfter: number): string | null {
  let all = "";
  for (const file of files) {
    let info: Deno.FileInfo;
    try {
      info = Deno.statSync(file);
    } catch {
      return null;
    }
    const changed = Math.max(info.mtime?.getTime() ?? 0, info.ctime?.getTime() ?? 0);
    if (!info.isFile || changed >= notAfter) return null;
    all += `${fileSignature(info)}|`;
  }
  return all;
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
