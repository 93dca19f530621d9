/**
 * The compiled-plugin cache (Deno-only): one file per content key in the
 * cache directory, written atomically (temp file + rename).
 *
 * @module
 */
import { writeAtomic } from "../host-deno/atomic.ts";
import { trimCacheAfterWrite } from "../host-deno/cache_trim.ts";

/** Path of the plugin for `key` inside `cacheDir`. */
export function cachePath(cacheDir: string, key: string): string {
  return `${cacheDir.replace(/\/+$/, "")}/js-${key}.wasm`;
}

/** The cached plugin for `key`, or null when there is none. */
export async function readCached(cacheDir: string, key: string): Promise<Uint8Array | null> {
  try {
    return await Deno.readFile(cachePath(cacheDir, key));
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}

/** Stores `bytes` as the plugin for `key`. */
export async function writeCached(cacheDir: string, key: string, bytes: Uint8Array): Promise<void> {
  await writeAtomic(cachePath(cacheDir, key), bytes, { parents: true });
  await trimCacheAfterWrite(cacheDir);
}

/** Path of the recorded build failure for `key` inside `cacheDir`. */
function failurePath(cacheDir: string, key: string): string {
  return `${cacheDir.replace(/\/+$/, "")}/js-${key}.failed`;
}

/**
 * How long a recorded build failure stands, ms: long enough that a hook
 * whose top level never ends costs a build now and then, not every call;
 * short enough that a build that only ran out of time on a loaded machine is
 * tried again soon.
 */
export const FAILURE_STANDS_MS = 10 * 60_000;

/**
 * Why the plugin for `key` failed to build, when that was recorded within
 * {@linkcode FAILURE_STANDS_MS}: a build is deterministic, so the same
 * sources fail the same way, and a hook whose top level never ends would
 * otherwise hold every call that finds it.
 */
export async function readFailure(cacheDir: string, key: string): Promise<string | null> {
  try {
    const { at, message } = JSON.parse(await Deno.readTextFile(failurePath(cacheDir, key)));
    const age = Date.now() - at;
    if (!(typeof message === "string" && age >= 0 && age < FAILURE_STANDS_MS)) return null;
    return message.slice(0, 4096);
  } catch {
    return null;
  }
}

/** Records why the plugin for `key` failed to build, now. */
export async function writeFailure(cacheDir: string, key: string, message: string): Promise<void> {
  const record = JSON.stringify({ at: Date.now(), message });
  await writeAtomic(failurePath(cacheDir, key), record, { parents: true });
}
