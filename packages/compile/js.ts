/**
 * Compiles JS/TS hooks (`scripts/run.js`, `.mjs`, `.ts`) to WebAssembly:
 * esbuild bundle → QuickJS engine plugin pre-initialised by Wizer with the
 * bundle's bytecode. See docs/COMPILER.md.
 *
 * @module
 */
import { HookboxError } from "../core/errors.ts";
import { isInside } from "../core/host.ts";
import { buildEngine, type EngineBuild, knownEngine } from "./_js_engine.ts";
import { BUNDLE_DEADLINE_MS, bundleJsHookWithInputs } from "./_js_bundle.ts";
import { withLineTable } from "./_js_lines.ts";
import { sha256Hex } from "../core/bytes.ts";
import { cachePath, readCached, readFailure, writeCached, writeFailure } from "./_js_cache.ts";
import { snapshotEngine } from "./_js_wizer.ts";
import { buildTime, OUT_OF_BUDGET, outOfBudget } from "./_build_time.ts";
import { REPO_ROOT } from "./_js_toolchain.ts";
import { writeAtomic } from "../host-deno/atomic.ts";
import { readFileEnd } from "../host-deno/fs.ts";
import { MAX_SOURCE_BYTES } from "../core/hook/files.ts";

/** Bumped whenever the pipeline changes in a way that changes the plugin. */
export const JS_COMPILER_VERSION = "hookbox-js/5"; // 5: a line table (hookbox.lines)

/** Options of {@linkcode compileJsHook}. */
export interface CompileJsOptions {
  /** Directory holding compiled plugins, keyed by content hash. */
  cacheDir: string;
  /**
   * Folders the bundle may read files from; an import outside them fails with
   * COMPILE_API_DENIED, so a hook cannot embed host files into its plugin.
   * @default [the hook folder (parent of `scripts/`), hookbox's `plugins/` directory]
   */
  allowedRoots?: string[];
  /**
   * CPU time the snapshot build may take, ms, in whole seconds (a
   * function-style hook's top level runs in it; Wizer's compile of the engine
   * counts, 1–2 s). A build stopped at it is recorded as failed until its
   * sources change. @default 10000
   */
  buildCpuMs?: number;
  /** Time bundling the sources may take before esbuild is stopped. @default 60000 */
  bundleTimeoutMs?: number;
}

/** A compiled JS hook plugin. */
export interface CompiledJsHook {
  /** The WASI command module (exports `_start` and `memory`). */
  bytes: Uint8Array;
  /** Hex SHA-256 of `bytes`, for pinning. */
  sha256: string;
  /** True when the plugin came from the cache without recompiling. */
  cached: boolean;
}

let engine: Promise<EngineBuild> | undefined;
/** Largest bundled script (the hook and everything it imports) compiled. */
const MAX_BUNDLE_CHARS = 8 * 1024 * 1024;

/**
 * The hook folder (the parent of `scripts/`, else the entry's folder, taken
 * from the path as given, before links are resolved) and hookbox's plugins/.
 */
function defaultRoots(entry: string): string[] {
  const dir = entry.slice(0, entry.lastIndexOf("/")) || "/";
  const hookDir = dir.endsWith("/scripts") ? dir.slice(0, -"/scripts".length) || "/" : dir;
  return [hookDir, `${REPO_ROOT}plugins`];
}

/**
 * The engine this process has, built already (its stamp holds) or being built
 * here, or null: finding out builds nothing.
 */
async function engineAtHand(): Promise<EngineBuild | null> {
  if (engine !== undefined) return await engine;
  const known = await knownEngine();
  if (known !== null) engine ??= Promise.resolve(known);
  return known;
}

/**
 * The engine, built here when it is not built yet (once per process; the
 * build is cached on disk). Building it is building: it takes this process's
 * building time (`_build_time.ts`) like a hook's build, so a call with none
 * left hands the hook's build over (the engine with it) instead of starting
 * clang itself.
 */
async function engineFor(entryPath: string): Promise<EngineBuild> {
  const have = await engineAtHand();
  if (have !== null) return have;
  if (buildTime.left() < 100) throw outOfBudget(entryPath);
  const started = performance.now();
  engine ??= buildEngine().catch((err) => {
    engine = undefined;
    throw err;
  });
  return await engine.finally(() => buildTime.spend(performance.now() - started));
}

/**
 * Compiles the hook at `entryPath`, reusing the cached plugin when the bundle,
 * the engine and the compiler version are unchanged.
 *
 * @example
 * ```ts ignore
 * const { bytes, sha256, cached } = await compileJsHook("hooks/guard/scripts/run.js", {
 *   cacheDir: ".cache/plugins",
 * });
 * ```
 */
export function compileJsHook(
  entryPath: string,
  options: CompileJsOptions,
): Promise<CompiledJsHook> {
  // One build at a time per hook and cache: a call that finds the hook being built (a daemon's
  // calls at once, or a build that outlived its call's deadline) waits for that build.
  const key = JSON.stringify([
    options.cacheDir,
    entryPath,
    options.buildCpuMs ?? null,
    options.bundleTimeoutMs ?? null,
  ]);
  let building = inFlight.get(key);
  if (building === undefined) {
    building = compileOnce(entryPath, options).finally(() => inFlight.delete(key));
    inFlight.set(key, building);
  }
  return building;
}

/** Builds under way, by cache, entry and time limit (see {@linkcode compileJsHook}). */
const inFlight = new Map<string, Promise<CompiledJsHook>>();

async function compileOnce(
  entryPath: string,
  options: CompileJsOptions,
): Promise<CompiledJsHook> {
  const { entry, roots, built, indexPath } = await buildIndexOf(
    entryPath,
    options,
    () => engineFor(entryPath),
  );
  // Unchanged sources: the index of the last build names the plugin, no bundler runs.
  const known = (await unchangedBuild(indexPath))?.key ?? null;
  if (known !== null) {
    const hit = await readCached(options.cacheDir, known);
    if (hit) return { bytes: hit, sha256: await sha256Hex(hit), cached: true };
    await failedBefore(options.cacheDir, known, entryPath);
  }
  // Building costs this process's building time (`_build_time.ts`); a cached build costs none.
  if (buildTime.left() < 100) throw outOfBudget(entryPath);
  const started = performance.now();
  const { code: bundle, inputs, lines } = await bundleJsHookWithInputs(
    entry,
    roots,
    Math.min(options.bundleTimeoutMs ?? BUNDLE_DEADLINE_MS, buildTime.left()),
  ).finally(() => buildTime.spend(performance.now() - started));
  if (bundle.length > MAX_BUNDLE_CHARS) {
    const msg = `the bundle is ${bundle.length} characters, over the ${MAX_BUNDLE_CHARS} cap`;
    throw new HookboxError("COMPILE_FAILED", msg, { path: entryPath });
  }
  // The line table is part of the plugin: the same bundle from sources whose lines moved is
  // another plugin.
  const table = lines === null ? "" : JSON.stringify(lines);
  const key = await sha256Hex([JS_COMPILER_VERSION, built.sha256, bundle, table].join("\0"));
  let result: CompiledJsHook;
  const hit = await readCached(options.cacheDir, key);
  if (hit) result = { bytes: hit, sha256: await sha256Hex(hit), cached: true };
  else {
    await failedBefore(options.cacheDir, key, entryPath);
    let snapshot: Uint8Array;
    const snapshotStarted = performance.now();
    try {
      snapshot = await snapshotEngine(built.path, bundle, options.buildCpuMs);
    } catch (err) {
      // The same bundle fails the same way: recorded, so no later call builds it again.
      if (err instanceof HookboxError && err.cause !== OUT_OF_BUDGET) {
        await writeFailure(options.cacheDir, key, err.message).catch(() => {});
        await writeIndex(indexPath, key, inputs).catch(() => {});
      }
      throw err;
    } finally {
      buildTime.spend(performance.now() - snapshotStarted);
    }
    const bytes = lines === null ? snapshot : withLineTable(snapshot, lines);
    await writeCached(options.cacheDir, key, bytes);
    result = { bytes, sha256: await sha256Hex(bytes), cached: false };
  }
  await writeIndex(indexPath, key, inputs).catch(() => {});
  return result;
}

/** Throws the failure recorded for the plugin `key`, if any (see `readFailure`). */
async function failedBefore(cacheDir: string, key: string, entryPath: string): Promise<void> {
  const failure = await readFailure(cacheDir, key);
  if (failure === null) return;
  throw new HookboxError(
    "COMPILE_FAILED",
    `${failure} (as when these sources were last built; change them to build again)`,
    { path: entryPath },
  );
}

/**
 * The cache key of the plugin {@linkcode compileJsHook} would return for
 * `entryPath` when the build index says its sources are unchanged and the
 * plugin is in the cache, else null; nothing is bundled or read but the
 * sources. The key names the plugin's bytes (the build is deterministic).
 * `files`: every file the answer was worked out from (sources, index, plugin).
 */
export async function cachedJsKey(
  entryPath: string,
  options: CompileJsOptions,
): Promise<{ key: string; files: string[] } | null> {
  // No engine yet: nothing is cached for it (the compile that follows builds it, or hands it over).
  const index = await buildIndexOf(entryPath, options, engineAtHand);
  if (index === null) return null;
  const build = await unchangedBuild(index.indexPath);
  if (build === null) return null;
  const plugin = cachePath(options.cacheDir, build.key);
  const info = await Deno.stat(plugin).catch(() => null);
  return info?.isFile
    ? { key: build.key, files: [...build.inputs, index.indexPath, plugin] }
    : null;
}

/** A checked entry, its roots, the engine and where its build index lives. */
interface BuildIndexPath {
  entry: string;
  roots: string[];
  built: EngineBuild;
  indexPath: string;
}

/**
 * Where the build index of `entryPath` lives, after checking the entry is
 * inside its roots; the index is named by the engine `engineOf` gives (asked
 * for after that check), and there is none without one.
 */
async function buildIndexOf(
  entryPath: string,
  options: CompileJsOptions,
  engineOf: () => Promise<EngineBuild>,
): Promise<BuildIndexPath>;
async function buildIndexOf(
  entryPath: string,
  options: CompileJsOptions,
  engineOf: () => Promise<EngineBuild | null>,
): Promise<BuildIndexPath | null>;
async function buildIndexOf(
  entryPath: string,
  options: CompileJsOptions,
  engineOf: () => Promise<EngineBuild | null>,
): Promise<BuildIndexPath | null> {
  const entry = await Deno.realPath(entryPath);
  const roots = await Promise.all(
    (options.allowedRoots ?? defaultRoots(entryPath)).map((r) => Deno.realPath(r).catch(() => r)),
  );
  if (!roots.some((root) => isInside(entry, root))) {
    throw new HookboxError(
      "COMPILE_FAILED",
      `${entryPath} resolves to ${entry}, outside the hook folder ${roots[0]}`,
      { path: entryPath },
    );
  }
  const built = await engineOf();
  if (built === null) return null;
  const indexPath = `${options.cacheDir}/js-index-${await sha256Hex(
    [JS_COMPILER_VERSION, built.sha256, entry, roots.join("\n")].join("\0"),
  )}.json`;
  return { entry, roots, built, indexPath };
}

/** The index of a build: the plugin's cache key and every file the bundle read, with its SHA-256. */
interface BuildIndex {
  key: string;
  inputs: { path: string; sha256: string }[];
}

/** The last build's cache key and inputs when none of the files it read changed, else null. */
async function unchangedBuild(
  indexPath: string,
): Promise<{ key: string; inputs: string[] } | null> {
  let index: BuildIndex;
  try {
    index = JSON.parse(await Deno.readTextFile(indexPath));
  } catch {
    return null;
  }
  if (!Array.isArray(index.inputs) || index.inputs.length === 0) return null;
  // Read and hashed side by side: a one-shot CLI checks every source on each start.
  const same = await Promise.all(index.inputs.map(async (input) => {
    try {
      // Only a regular file, and no more of it than a hook's source may hold: a source replaced by
      // a FIFO would block the read, by a device or a file of gigabytes fill the memory.
      const file = await readFileEnd(input.path, MAX_SOURCE_BYTES + 1, {
        end: "head",
        follow: true,
      });
      if (file === null || !file.whole) return false;
      return (await sha256Hex(file.bytes)) === input.sha256;
    } catch {
      return false;
    }
  }));
  if (same.includes(false)) return null;
  return typeof index.key === "string"
    ? { key: index.key, inputs: index.inputs.map((i) => i.path) }
    : null;
}

async function writeIndex(indexPath: string, key: string, inputs: string[]): Promise<void> {
  const entries = await Promise.all(inputs.map(async (path) => ({
    path,
    sha256: await sha256Hex(await Deno.readFile(path)),
  })));
  await writeAtomic(indexPath, JSON.stringify({ key, inputs: entries } satisfies BuildIndex));
}
