/**
 * Early compilation of the prepared plugins a one-shot process will likely
 * load. `hookbox dispatch` is spawned once per agent event, and most of its
 * life is spent loading its own code; compiling the 1.9 MB QuickJS engine
 * waited until the hooks were found. Each run remembers the prepared entries
 * it loaded (`<cacheDir>/prepared-recent.json`, at most
 * {@linkcode MAX_RECENT}); the next run starts reading, hashing and
 * compiling them on V8's background threads before its own modules load,
 * and {@linkcode takePrefetched} hands a result to the disk cache's reader,
 * which checks it against the entry's recorded SHA-256 as for any read.
 *
 * Nothing here decides what runs: an entry is only used when the disk cache
 * looks it up by its key, and a stale list costs one unused compile.
 *
 * @module
 */

/** Entries remembered. */
export const MAX_RECENT = 8;
/** Most bytes read ahead in one process. */
const MAX_PREFETCH_BYTES = 32 * 1024 * 1024;
const KEY = /^[0-9a-f]{64}$/;

/** A prepared module read and compiled ahead: its bytes' SHA-256 and the module. */
export interface Prefetched {
  sha256: string;
  module: WebAssembly.Module;
}

const early = new Map<string, Promise<Prefetched | null>>();
/** The list of each cache folder, as this process last read or wrote it. */
const lists = new Map<string, string[]>();

function listPath(cacheDir: string): string {
  return `${cacheDir}/prepared-recent.json`;
}

function readList(cacheDir: string): string[] {
  try {
    const text = Deno.readTextFileSync(listPath(cacheDir));
    if (text.length > 4096) return [];
    const list: unknown = JSON.parse(text);
    if (!Array.isArray(list)) return [];
    return list.filter((k): k is string => typeof k === "string" && KEY.test(k))
      .slice(0, MAX_RECENT);
  } catch {
    return [];
  }
}

/**
 * Starts reading and compiling the entries the last runs loaded from
 * `cacheDir`: the reads run on Deno's I/O threads and compile and hash on
 * V8's, while the caller goes on loading its modules. Never throws.
 */
export function prefetchPrepared(cacheDir: string): void {
  const remembered = readList(cacheDir);
  lists.set(cacheDir, remembered);
  let budget = MAX_PREFETCH_BYTES;
  for (const key of remembered) {
    const base = `${cacheDir}/prepared/${key}`;
    const compiled = Deno.readFile(`${base}.wasm`).then((bytes) => {
      budget -= bytes.byteLength;
      if (budget < 0) return null;
      return Promise.all([crypto.subtle.digest("SHA-256", bytes), WebAssembly.compile(bytes)])
        .then(([digest, module]) => ({ sha256: hex(digest), module }));
    }).catch(() => null);
    early.set(base, compiled);
  }
}

/** The early compile of the entry at `base` (once), if one was started. */
export function takePrefetched(base: string): Promise<Prefetched | null> | undefined {
  const found = early.get(base);
  early.delete(base);
  return found;
}

/**
 * Notes that the entry `key` of `cacheDir` was loaded; the list is rewritten
 * (most recent first) when it did not hold it. Never throws.
 */
export async function rememberPrepared(cacheDir: string, key: string): Promise<void> {
  const remembered = lists.get(cacheDir) ?? readList(cacheDir);
  lists.set(cacheDir, remembered);
  if (remembered.includes(key)) return;
  const list = [key, ...remembered].slice(0, MAX_RECENT);
  lists.set(cacheDir, list);
  const path = listPath(cacheDir);
  const tmp = `${path}.${crypto.randomUUID()}`;
  try {
    await Deno.writeTextFile(tmp, JSON.stringify(list));
    await Deno.rename(tmp, path);
  } catch {
    await Deno.remove(tmp).catch(() => {});
  }
}

function hex(digest: ArrayBuffer): string {
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}
