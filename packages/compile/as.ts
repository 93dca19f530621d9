/**
 * AssemblyScript hooks (`scripts/run.as.ts`) → Extism-native plugins.
 *
 * A hook exports `hook(): i32` (the exit code) and talks to the host through
 * the hookbox library: `import { input, stdout, stderr } from "hookbox"`.
 * The output imports only `extism:host/env` and exports `hook` and `memory`.
 * Results are cached in `cacheDir` under the SHA-256 of source, library,
 * compiler version and flags, so an unchanged hook is never recompiled.
 *
 * @module
 */

import { ASC_VERSION } from "./_as_asc.ts";
import { AS_FLAGS, compileAsSource } from "./_as_compile.ts";
import { type CompileHost, denoCompileHost } from "./_as_host.ts";
import { asLibraryPaths, loadAsLibrary } from "./_as_library.ts";
import { sha256Hex } from "../core/bytes.ts";
import { HookboxError } from "../core/errors.ts";
import { buildTime, outOfBudget } from "./_build_time.ts";

export type { CompileHost } from "./_as_host.ts";

/** Options of {@linkcode compileAsHook}. */
export interface CompileAsOptions {
  /** Folder for compiled plugins, keyed by content hash. */
  cacheDir: string;
  /** File access. @default Deno file APIs */
  host?: CompileHost;
}

/** A compiled AssemblyScript hook. */
export interface CompiledAsHook {
  /** The Extism-native plugin. */
  bytes: Uint8Array;
  /** Hex SHA-256 of `bytes` (for HOOK.md `sha256:` pins). */
  sha256: string;
  /** True when served from `cacheDir` without compiling. */
  cached: boolean;
}

/**
 * Compiles the AssemblyScript hook at `entryPath`, or returns the cached
 * plugin. Throws `HookboxError` `COMPILE_FAILED` (with the compiler's first
 * diagnostics) or `COMPILE_API_DENIED` (a host API hookbox does not offer).
 *
 * @example
 * ```ts ignore
 * const { bytes, sha256 } = await compileAsHook("hooks/shell-guard-as/scripts/run.as.ts", {
 *   cacheDir: ".cache/plugins",
 * });
 * ```
 */
export async function compileAsHook(
  entryPath: string,
  options: CompileAsOptions,
): Promise<CompiledAsHook> {
  const host = options.host ?? denoCompileHost;
  const source = await host.readText(entryPath);
  const library = await loadAsLibrary((url) => host.readText(url));
  const key = await asCacheKey(source, library);
  const cachePath = `${options.cacheDir}/as-${key}.wasm`;
  const hit = await host.readBytes(cachePath);
  if (hit !== null && WebAssembly.validate(hit as Uint8Array<ArrayBuffer>)) {
    return { bytes: hit, sha256: await sha256Hex(hit), cached: true };
  }
  // In a process that answers agents, compiling runs on its thread and costs its building
  // time (`_build_time.ts`): a source small enough to compile in about a second or two, only.
  if (buildTime.bounded) {
    if (source.length > BOUNDED_AS_SOURCE_CHARS) {
      throw new HookboxError(
        "COMPILE_FAILED",
        `the source is ${source.length} characters: an agent's hook call compiles at most ` +
          `${BOUNDED_AS_SOURCE_CHARS} (about 2 s); run \`hookbox compile\` on the hook once`,
        { path: entryPath },
      );
    }
    if (buildTime.left() < 100) throw outOfBudget(entryPath);
  }
  const started = performance.now();
  const bytes = await compileAsSource(source, library, entryPath)
    .finally(() => buildTime.spend(performance.now() - started));
  await host.writeBytes(cachePath, bytes);
  return { bytes, sha256: await sha256Hex(bytes), cached: false };
}

/**
 * Longest AssemblyScript source a process that answers agents compiles: the
 * compiler takes about 25 µs a character on this thread (564 KB took 14 s),
 * and cannot be stopped part-way.
 */
export const BOUNDED_AS_SOURCE_CHARS = 64 * 1024;

/**
 * The cache key of the plugin {@linkcode compileAsHook} would return for
 * `entryPath` when it is in the cache, else null; nothing is compiled.
 * `files`: every file the answer was worked out from (source, library, plugin).
 */
export async function cachedAsKey(
  entryPath: string,
  options: CompileAsOptions,
): Promise<{ key: string; files: string[] } | null> {
  const host = options.host ?? denoCompileHost;
  const source = await host.readText(entryPath);
  const library = await loadAsLibrary((url) => host.readText(url));
  const key = await asCacheKey(source, library);
  const plugin = `${options.cacheDir}/as-${key}.wasm`;
  const hit = await host.readBytes(plugin);
  if (hit === null || !WebAssembly.validate(hit as Uint8Array<ArrayBuffer>)) return null;
  return { key, files: [entryPath, ...asLibraryPaths(), plugin] };
}

/** Cache key: SHA-256 over compiler version, flags, library and source. */
export async function asCacheKey(
  source: string,
  library: ReadonlyMap<string, string>,
): Promise<string> {
  const parts = ["hookbox-as/2", ASC_VERSION, AS_FLAGS.join(" ")];
  for (const [name, text] of library) parts.push(name, text);
  parts.push(source);
  return await sha256Hex(new TextEncoder().encode(parts.join("\0")));
}
