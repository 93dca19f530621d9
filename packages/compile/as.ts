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
import { buildTime, OUT_OF_BUDGET, outOfBudget } from "./_build_time.ts";
import { BUILD_HEAP_MB, cliCommand } from "./_build_later.ts";
import { runCommand } from "./_js_toolchain.ts";

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
          `${BOUNDED_AS_SOURCE_CHARS} (about 2 s) itself`,
        { path: entryPath, cause: OUT_OF_BUDGET },
      );
    }
    if (buildTime.left() < 100) throw outOfBudget(entryPath);
  }
  const started = performance.now();
  const hookDir = entryPath.endsWith(AS_ENTRY) ? entryPath.slice(0, -AS_ENTRY.length) : null;
  if (buildTime.bounded && hookDir !== null && options.host === undefined) {
    // The compiler cannot be stopped part-way on this thread, and a small
    // source can keep it busy for minutes (twenty nested `@inline` functions):
    // it runs in a process of its own, stopped when the building time is spent.
    await compileApart(hookDir, entryPath, options.cacheDir, buildTime.left())
      .finally(() => buildTime.spend(performance.now() - started));
    const built = await host.readBytes(cachePath);
    if (built === null || !WebAssembly.validate(built as Uint8Array<ArrayBuffer>)) {
      throw new HookboxError(
        "COMPILE_FAILED",
        "the source changed while it was compiled; a later call builds it",
        { path: entryPath },
      );
    }
    return { bytes: built, sha256: await sha256Hex(built), cached: false };
  }
  const bytes = await compileAsSource(source, library, entryPath)
    .finally(() => buildTime.spend(performance.now() - started));
  await host.writeBytes(cachePath, bytes);
  return { bytes, sha256: await sha256Hex(bytes), cached: false };
}

/** Where a hook folder's AssemblyScript entry is. */
const AS_ENTRY = "/scripts/run.as.ts";

/**
 * `hookbox compile DIR --cache-dir CACHE` in a process of its own, killed
 * after `timeoutMs`: the plugin lands in the cache. The command is this
 * CLI's own (the bundled one, or the source's `main.ts`).
 */
async function compileApart(
  dir: string,
  entryPath: string,
  cacheDir: string,
  timeoutMs: number,
): Promise<void> {
  const [cli, cliArgs] = cliCommand(BUILD_HEAP_MB);
  const out = await Deno.makeTempDir({ prefix: "hookbox-as-" });
  try {
    const result = await runCommand(
      cli,
      [
        ...cliArgs,
        "compile",
        dir,
        "--cache-dir",
        cacheDir,
        "--out",
        out,
      ],
      undefined,
      { timeoutMs: Math.max(1, Math.floor(timeoutMs)), maxOutput: 64 * 1024 },
    );
    if (result.timedOut) {
      throw new HookboxError(
        "COMPILE_FAILED",
        `not built: the AssemblyScript compiler did not finish within the ${
          Math.floor(timeoutMs)
        } ms of building time left to this call`,
        { path: entryPath, cause: OUT_OF_BUDGET },
      );
    }
    if (result.code !== 0) {
      const line = result.stderr.trim().split("\n").findLast((l) => l.startsWith("hookbox: ")) ??
        `hookbox: COMPILE_FAILED: the compiler ended with exit ${result.code}`;
      const m = /^hookbox: (COMPILE_API_DENIED|[A-Z_]+)(?: \S+)?: (.*)$/.exec(line);
      throw new HookboxError(
        m?.[1] === "COMPILE_API_DENIED" ? "COMPILE_API_DENIED" : "COMPILE_FAILED",
        m?.[2] ?? line.slice("hookbox: ".length),
        { path: entryPath },
      );
    }
  } finally {
    await Deno.remove(out, { recursive: true }).catch(() => {});
  }
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
