/**
 * Builds the QuickJS engine plugin (Deno-only): our C glue in plugins/engine
 * plus QuickJS 2021-03-27, compiled with clang for wasm32-wasi at -O2, one
 * clang process per source file in parallel, linked as a WASI command module.
 *
 * The result is cached in `.cache/engine/<key>/engine.wasm`, keyed by the
 * SHA-256 of every source, the prelude, the flags and `clang --version`.
 *
 * @module
 */
import { sha256Hex } from "../core/bytes.ts";
import { patchFiles } from "./_js_patches.ts";
import { withLock } from "./_js_lock.ts";
import { checkClang, ensureNpmPackages, QUICKJS_DIR, REPO_ROOT } from "./_js_toolchain.ts";
import {
  CFLAGS,
  compileAndLink,
  ENGINE_SRC,
  GLUE_FILES,
  headerSalt,
  HOT_FUNCTIONS,
  LDFLAGS,
  QUICKJS_FILES,
} from "./_js_clang.ts";
import { writeAtomic } from "../host-deno/atomic.ts";

export { ENGINE_SRC };

/** A built engine: where it is and the hash the compiler cache is keyed by. */
export interface EngineBuild {
  path: string;
  sha256: string;
  cached: boolean;
}

async function readText(path: string): Promise<string> {
  return await Deno.readTextFile(path);
}

/** The prelude: every `prelude/*.js` in name order, inside one function. */
export async function preludeSource(): Promise<string> {
  const names = [];
  for await (const e of Deno.readDir(`${ENGINE_SRC}/prelude`)) {
    if (e.isFile && e.name.endsWith(".js")) names.push(e.name);
  }
  const parts = await Promise.all(names.sort().map((n) => readText(`${ENGINE_SRC}/prelude/${n}`)));
  return `(function (host) {\n"use strict";\n${
    parts.join("\n")
  }\n})(globalThis.__hookbox_host);\n` +
    "delete globalThis.__hookbox_host;\n";
}

/** Every C source and header the engine is compiled from. */
function sourceFiles(): string[] {
  return [
    ...GLUE_FILES.map((f) => `${ENGINE_SRC}/${f}`),
    `${ENGINE_SRC}/engine.h`,
    `${ENGINE_SRC}/include/pthread.h`,
    HOT_FUNCTIONS,
    ...QUICKJS_FILES.map((f) => `${QUICKJS_DIR}/${f}`),
    ...patchFiles(),
  ];
}

async function engineKey(clang: string, prelude: string): Promise<string> {
  const texts = await Promise.all(sourceFiles().map(readText));
  return await sha256Hex(
    [clang, CFLAGS.join(" "), LDFLAGS.join(" "), prelude, ...texts]
      .join("\0"),
  );
}

/** Where built engines are kept. */
const ENGINE_CACHE = `${REPO_ROOT}.cache/engine`;

/**
 * The engine plugin built from the current sources, found by its stamp (see
 * {@linkcode buildEngine}) without building anything, or null.
 */
export async function knownEngine(cacheRoot = ENGINE_CACHE): Promise<EngineBuild | null> {
  const stamp = await stampPath(cacheRoot);
  return stamp ? readStamp(stamp) : null;
}

/**
 * Builds (or reuses) the engine plugin; see the module doc for the cache key.
 * A one-shot CLI must not spawn clang and hash every QuickJS source on each
 * run, so a stamp keyed by the size and mtime of every input (sources,
 * prelude, flags, the clang and wasm-ld binaries) names the engine last built
 * from them, and is trusted while the engine file's own size and mtime match.
 */
export async function buildEngine(cacheRoot = ENGINE_CACHE): Promise<EngineBuild> {
  const stamp = await stampPath(cacheRoot);
  const known = stamp ? readStamp(stamp) : null;
  if (known) return known;
  const clangVersion = await checkClang();
  await Deno.mkdir(cacheRoot, { recursive: true });
  const built = await withLock(`${cacheRoot}/.lock`, () => buildLocked(cacheRoot, clangVersion));
  if (stamp) await writeStamp(stamp, built).catch(() => {});
  return built;
}

interface Stamp {
  path: string;
  sha256: string;
  size: number;
  mtime: number;
}

async function stampPath(cacheRoot: string): Promise<string | null> {
  try {
    const prelude = [...Deno.readDirSync(`${ENGINE_SRC}/prelude`)]
      .filter((e) => e.isFile && e.name.endsWith(".js"))
      .map((e) => `${ENGINE_SRC}/prelude/${e.name}`)
      .sort();
    const clang = onPath("clang");
    if (!clang) return null;
    const files = [...sourceFiles(), ...prelude, clang, "/usr/bin/wasm-ld"];
    // Synchronous: some thirty cached stats, each an event-loop round trip
    // when asynchronous (~2 ms of a one-shot CLI's start).
    const stats = files.map((f) => Deno.statSync(f));
    const lines = files.map((f, i) => `${f}:${stats[i]!.size}:${stats[i]!.mtime?.getTime()}`);
    const key = await sha256Hex(
      [CFLAGS.join(" "), LDFLAGS.join(" "), ...lines].join("\n"),
    );
    return `${cacheRoot}/stamps/${key.slice(0, 32)}.json`;
  } catch {
    return null;
  }
}

/** The first `name` on $PATH, as `clang --version` would run it. */
function onPath(name: string): string | null {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    const path = `${dir || "."}/${name}`;
    try {
      if (Deno.statSync(path).isFile) return path;
    } catch { /* not here */ }
  }
  return null;
}

function readStamp(path: string): EngineBuild | null {
  try {
    const stamp = JSON.parse(Deno.readTextFileSync(path)) as Stamp;
    const info = Deno.statSync(stamp.path);
    if (info.size !== stamp.size || info.mtime?.getTime() !== stamp.mtime) return null;
    return { path: stamp.path, sha256: stamp.sha256, cached: true };
  } catch {
    return null;
  }
}

async function writeStamp(path: string, built: EngineBuild): Promise<void> {
  const info = await Deno.stat(built.path);
  const stamp: Stamp = {
    path: built.path,
    sha256: built.sha256,
    size: info.size,
    mtime: info.mtime?.getTime() ?? 0,
  };
  await writeAtomic(path, JSON.stringify(stamp), { parents: true });
}

/**
 * A line about a long step, for the person waiting: on stderr when it is a
 * terminal (never into an agent's hook protocol or a service's JSON log).
 */
function progress(line: string): void {
  try {
    if (Deno.stderr.isTerminal()) console.error(`hookbox: ${line}`);
  } catch { /* no stderr to ask */ }
}

async function buildLocked(cacheRoot: string, clangVersion: string): Promise<EngineBuild> {
  await ensureNpmPackages();
  const prelude = await preludeSource();
  const key = await engineKey(clangVersion, prelude);
  const dir = `${cacheRoot}/${key.slice(0, 16)}`;
  const path = `${dir}/engine.wasm`;
  try {
    const bytes = await Deno.readFile(path);
    return { path, sha256: await sha256Hex(bytes), cached: true };
  } catch { /* not built yet */ }
  // Holding the lock, no other build is under way: a folder of one that was killed goes.
  for await (const entry of Deno.readDir(cacheRoot)) {
    if (entry.isDirectory && entry.name.includes(".tmp-")) {
      await Deno.remove(`${cacheRoot}/${entry.name}`, { recursive: true }).catch(() => {});
    }
  }
  const tmp = `${dir}.tmp-${crypto.randomUUID()}`;
  await Deno.mkdir(tmp, { recursive: true });
  const started = performance.now();
  progress("building the JS engine plugin (QuickJS with clang, then a Wizer snapshot; once)…");
  try {
    await compileAndLink(tmp, prelude, await headerSalt(clangVersion));
    progress(`built the JS engine plugin in ${Math.round((performance.now() - started) / 1000)} s`);
    await Deno.rename(tmp, dir).catch(() => {/* a concurrent build won */});
  } finally {
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
  return { path, sha256: await sha256Hex(await Deno.readFile(path)), cached: false };
}
