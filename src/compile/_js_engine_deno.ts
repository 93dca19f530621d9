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
import { sha256Hex } from "./_js_hash.ts";
import { PATCHES } from "./_js_patches.ts";
import { withLock } from "./_js_lock_deno.ts";
import { checkClang, ensureNpmPackages, QUICKJS_DIR, REPO_ROOT } from "./_js_toolchain_deno.ts";
import {
  CFLAGS,
  compileAndLink,
  ENGINE_SRC,
  GLUE_FILES,
  headerSalt,
  LDFLAGS,
  QUICKJS_FILES,
} from "./_js_clang_deno.ts";

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

async function engineKey(clang: string, prelude: string): Promise<string> {
  const files = [
    ...GLUE_FILES.map((f) => `${ENGINE_SRC}/${f}`),
    `${ENGINE_SRC}/engine.h`,
    `${ENGINE_SRC}/include/pthread.h`,
    ...QUICKJS_FILES.map((f) => `${QUICKJS_DIR}/${f}`),
  ];
  const texts = await Promise.all(files.map(readText));
  return await sha256Hex(
    [clang, CFLAGS.join(" "), LDFLAGS.join(" "), prelude, JSON.stringify(PATCHES), ...texts]
      .join("\0"),
  );
}

/** Builds (or reuses) the engine plugin; see the module doc for the cache key. */
export async function buildEngine(cacheRoot = `${REPO_ROOT}.cache/engine`): Promise<EngineBuild> {
  const clangVersion = await checkClang();
  await Deno.mkdir(cacheRoot, { recursive: true });
  return await withLock(`${cacheRoot}/.lock`, () => buildLocked(cacheRoot, clangVersion));
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
  const tmp = `${dir}.tmp-${crypto.randomUUID()}`;
  await Deno.mkdir(tmp, { recursive: true });
  try {
    await compileAndLink(tmp, prelude, await headerSalt(clangVersion));
    await Deno.rename(tmp, dir).catch(() => {/* a concurrent build won */});
  } finally {
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
  return { path, sha256: await sha256Hex(await Deno.readFile(path)), cached: false };
}
