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
import { loadAsLibrary } from "./_as_library.ts";
import { sha256Hex } from "../core/bytes.ts";

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
  const bytes = await compileAsSource(source, library, entryPath);
  await host.writeBytes(cachePath, bytes);
  return { bytes, sha256: await sha256Hex(bytes), cached: false };
}

/**
 * The cache key of the plugin {@linkcode compileAsHook} would return for
 * `entryPath` when it is in the cache, else null; nothing is compiled.
 */
export async function cachedAsKey(
  entryPath: string,
  options: CompileAsOptions,
): Promise<string | null> {
  const host = options.host ?? denoCompileHost;
  const source = await host.readText(entryPath);
  const library = await loadAsLibrary((url) => host.readText(url));
  const key = await asCacheKey(source, library);
  const hit = await host.readBytes(`${options.cacheDir}/as-${key}.wasm`);
  return hit !== null && WebAssembly.validate(hit as Uint8Array<ArrayBuffer>) ? key : null;
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
