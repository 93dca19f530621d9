/**
 * The compiled-plugin cache (Deno-only): one file per content key in the
 * cache directory, written atomically (temp file + rename).
 *
 * @module
 */
import { writeAtomic } from "../host-deno/atomic.ts";

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
}
