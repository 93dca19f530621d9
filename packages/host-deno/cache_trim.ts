/**
 * Keeps a hookbox cache folder within a size. Every edit of a JS hook leaves
 * a compiled plugin and a prepared one behind (about 3 MB together), and
 * nothing ever read them again: a user's cache, or an agent editing hooks in
 * a loop, grew without end (6.6 GB measured on a development machine).
 *
 * After a process writes a new entry, {@linkcode trimCacheAfterWrite} looks
 * at the folder (at most once every ten minutes per process): when its
 * entries take more than the cap (`HOOKBOX_CACHE_MAX_MB`, default 1024),
 * the least recently used go until they take three quarters of it. Use is
 * the file's access time (Linux updates it about once a day on read) or its
 * modification time, whichever is later; entries used in the last ten
 * minutes stay whatever the cap. Temporary files of writes a killed process
 * never finished go after an hour, and so do hookbox's own in the system's
 * temporary folder ({@linkcode sweepStaleTemp}). Only names hookbox writes
 * are ever removed, whatever else the folder holds.
 *
 * @module
 */

/** The cache's cap by default, MiB. */
export const CACHE_MAX_MB = 1024;

/** Entries used this recently are never removed, ms. */
const KEEP_RECENT_MS = 10 * 60_000;
/** A temporary file this old belongs to a write that never finished, ms. */
const STALE_TEMP_MS = 60 * 60_000;
/** Shortest time between two looks at one folder in one process, ms. */
const TRIM_EVERY_MS = 10 * 60_000;

const HEX = "[0-9a-f]{64}";
/** Compiled plugins and build failures (`js-…`, `as-…`), prepared entries and their aliases. */
const ENTRY = new RegExp(
  `^(?:(?:js|as)-${HEX}\\.(?:wasm|failed)|${HEX}\\.(?:wasm|json|runs)|id-${HEX})$`,
);
/** An entry's temporary name while it is written (`atomic.ts`). */
const TEMP = new RegExp(`^${ENTRY.source.slice(1, -1)}\\.[0-9a-f-]{36}\\.tmp$`);

/** The folders of a cache that hold entries: the folder itself, prepared plugins, discovery scans. */
const PARTS = ["", "prepared/", "scans/"];

/** What one trim found and did. */
export interface Trimmed {
  /** Entries found. */
  files: number;
  /** Bytes the entries found take on disk. */
  bytes: number;
  /** Entries and stale temporary files removed. */
  removed: number;
  /** Bytes those took on disk. */
  freed: number;
}

/** The cap, bytes: `HOOKBOX_CACHE_MAX_MB` (whole MiB, at least 1), else the default (one line says why). */
export function cacheMaxBytes(given = Deno.env.get("HOOKBOX_CACHE_MAX_MB")): number {
  if (given === undefined || given === "") return CACHE_MAX_MB * 1024 * 1024;
  const mb = /^[0-9]{1,7}$/.test(given) ? Number(given) : 0;
  if (mb >= 1) return mb * 1024 * 1024;
  console.error(
    `hookbox: HOOKBOX_CACHE_MAX_MB must be whole MiB, at least 1, not "${given}"; using ${CACHE_MAX_MB}`,
  );
  return CACHE_MAX_MB * 1024 * 1024;
}

/** Bytes a file takes on disk: its blocks where the system says, else its size in 4 KiB blocks. */
function onDisk(info: Deno.FileInfo): number {
  return info.blocks !== null ? info.blocks * 512 : Math.ceil(info.size / 4096) * 4096;
}

/** Trims `dir` to `maxBytes` now (see the module's doc). */
export async function trimCache(
  dir: string,
  maxBytes: number = cacheMaxBytes(),
  now: number = Date.now(),
): Promise<Trimmed> {
  const found: { path: string; used: number; bytes: number }[] = [];
  const out: Trimmed = { files: 0, bytes: 0, removed: 0, freed: 0 };
  const remove = async (path: string, bytes: number) => {
    try {
      await Deno.remove(path);
      out.removed++;
      out.freed += bytes;
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err; // another process took it first
    }
  };
  for (const part of PARTS) {
    const folder = `${dir.replace(/\/+$/, "")}/${part}`;
    const names: string[] = [];
    try {
      for await (const entry of Deno.readDir(folder)) {
        if (entry.isFile && (ENTRY.test(entry.name) || TEMP.test(entry.name))) {
          names.push(entry.name);
        }
      }
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) continue;
      throw err;
    }
    for (const name of names) {
      const path = folder + name;
      const info = await Deno.lstat(path).catch(() => null);
      if (info === null || !info.isFile) continue;
      const used = Math.max(info.atime?.getTime() ?? 0, info.mtime?.getTime() ?? 0);
      if (TEMP.test(name)) {
        if (now - used > STALE_TEMP_MS) await remove(path, onDisk(info));
        continue;
      }
      found.push({ path, used, bytes: onDisk(info) });
    }
  }
  out.files = found.length;
  out.bytes = found.reduce((n, f) => n + f.bytes, 0);
  if (out.bytes <= maxBytes) return out;
  let left = out.bytes;
  for (const file of found.sort((a, b) => a.used - b.used)) {
    if (left <= maxBytes * 0.75 || now - file.used < KEEP_RECENT_MS) break;
    await remove(file.path, file.bytes);
    left -= file.bytes;
  }
  return out;
}

/** Names of hookbox's own temporary files and folders in the system's temporary folder. */
const SYSTEM_TEMP = /^hookbox-(?:build|upload)-/;

/**
 * Removes hookbox's own temporary files and folders (`hookbox-build-…`,
 * `hookbox-upload-…`) over an hour old from `tmp` (the system's temporary
 * folder): those of a process killed while it built a hook or took an upload.
 * Returns how many went.
 */
export async function sweepStaleTemp(
  tmp: string = Deno.env.get("TMPDIR") || "/tmp",
  now: number = Date.now(),
): Promise<number> {
  let removed = 0;
  const uid = Deno.uid();
  for await (const entry of Deno.readDir(tmp)) {
    if (!SYSTEM_TEMP.test(entry.name) || entry.isSymlink) continue;
    const path = `${tmp.replace(/\/+$/, "")}/${entry.name}`;
    const info = await Deno.lstat(path).catch(() => null);
    // Only this user's: another user's may still be in use, and is theirs to remove.
    if (info === null || info.isSymlink || (uid !== null && info.uid !== uid)) continue;
    if (now - (info.mtime?.getTime() ?? now) <= STALE_TEMP_MS) continue;
    await Deno.remove(path, { recursive: true }).then(() => removed++, () => {});
  }
  return removed;
}

const lastTrim = new Map<string, number>();
/** Whether this process has swept the system's temporary folder. */
let swept = false;

/**
 * {@linkcode trimCache} of `dir` after this process wrote an entry there, at
 * most once every ten minutes per folder, and {@linkcode sweepStaleTemp}
 * once per process; a failure is one line on stderr (the entry written
 * stays).
 */
export async function trimCacheAfterWrite(dir: string): Promise<void> {
  const now = Date.now();
  const last = lastTrim.get(dir);
  if (last !== undefined && now - last < TRIM_EVERY_MS) return;
  lastTrim.set(dir, now);
  try {
    await trimCache(dir, cacheMaxBytes(), now);
  } catch (err) {
    console.error(`hookbox: could not trim the cache ${dir}: ${(err as Error).message}`);
  }
  if (swept) return;
  swept = true;
  await sweepStaleTemp(undefined, now).catch((err) =>
    console.error(`hookbox: could not sweep the temporary folder: ${(err as Error).message}`)
  );
}
