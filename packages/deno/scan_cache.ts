/**
 * Discovery remembered on disk between processes. An agent spawns `hookbox
 * dispatch` once per event, and reading, parsing and validating every
 * HOOK.md again each time is most of what it would spend before the first
 * hook runs.
 *
 * An entry holds one folder's {@linkcode Discovery} plus the signature of
 * every path discovery looked at — found or missing, read, listed or
 * resolved — and is used only while every signature still holds: a HOOK.md
 * edited, an entry file added (a `plugin.wasm` that now takes precedence),
 * a mode changed (`scripts/run` made executable), a folder added, or a
 * symbolic link pointed elsewhere, and the folder is scanned again. Paths
 * changed within {@linkcode RACY_MS} before the scan began are not trusted to
 * a signature (time stamps are coarse): such a scan is not stored.
 *
 * An entry also names the discovery code that wrote it (a hash of
 * `packages/core/hook/` and `packages/core/schema/`, baked in at build time in the bundled CLI):
 * a hookbox with other discovery rules never uses an older one's scans.
 *
 * Entries live in the cache folder (`$XDG_CACHE_HOME/hookbox/scans/`), which,
 * like the prepared-plugin cache beside it, must be writable by the user
 * alone: an entry is trusted as discovery's own output.
 *
 * @module
 */
import type { Discovery } from "../core/hook/discover.ts";
import type { HookLevel } from "../core/hook/types.ts";
import type { DirEntry, HostFs, PathInfo } from "../core/host.ts";
import { sha256HexOf } from "../core/bytes.ts";
import { MAX_FOLDER_ENTRIES } from "../core/hook/files.ts";
import { MAX_WORK_DIR } from "../core/schema/event.ts";
import { codeFingerprint, sourceHash } from "./prepared_cache.ts";
import { writeAtomicSync } from "../host-deno/atomic.ts";

/** Format of an entry; bumped when discovery's output or rules change. */
const FORMAT = "hookbox-scan-2";
/** A path changed less than this before a scan began is not trusted to its signature. */
export const RACY_MS = 2000;
/** Largest entry read back (a folder of 1,000 hooks with 64 KiB HOOK.md bodies would not fit). */
const MAX_ENTRY_BYTES = 16 * 1024 * 1024;

/** How discovery used a path (bits), which decides what its signature covers. */
const STAT = 0, LIST = 1, REAL = 2;

/** Set by `scripts/build_cli.ts` in the bundled CLI: {@linkcode discoverySourceHash} at build time. */
declare const __HOOKBOX_DISCOVERY_HASH__: string | undefined;

const DISCOVERY_DIRS = ["core/hook/", "core/schema/"];

/** SHA-256 over the `.ts` sources of `core/hook/` and `core/schema/` under `srcRoot` (`packages/`). */
export function discoverySourceHash(srcRoot: URL): Promise<string> {
  return sourceHash(srcRoot, DISCOVERY_DIRS);
}

/** The discovery code's hash; null when its sources cannot be read (then nothing is cached). */
function discoveryFingerprint(): Promise<string | null> {
  const baked = typeof __HOOKBOX_DISCOVERY_HASH__ === "string" ? __HOOKBOX_DISCOVERY_HASH__ : null;
  return codeFingerprint(baked, DISCOVERY_DIRS);
}

interface Entry {
  format: string;
  /** The discovery code that wrote it. */
  code: string;
  dir: string;
  level: HookLevel;
  /** [path, use bits, signature] for every path discovery touched. */
  paths: [string, number, string][];
  discovery: Discovery;
}

/** Scans a folder (the executor's `scan`), the way `scanPath` does. */
export type Scan = (dir: string, level: HookLevel) => Promise<Discovery>;

/**
 * Entries this process read or wrote, by file, with their size as stored: one
 * is used while the signatures it records hold, whatever became of its file,
 * so a process that scans on every call (the daemon) reads and parses an
 * entry only when it changes. The least recently used go past
 * {@linkcode KEPT_ENTRIES} or {@linkcode KEPT_BYTES}: a repository's big
 * HOOK.md files cannot make a long-lived process hold more.
 */
const kept = new Map<string, { entry: Entry; bytes: number }>();
/** Entries kept in memory at most. */
const KEPT_ENTRIES = 64;
/** Their stored bytes at most; a larger entry is not kept. */
export const KEPT_BYTES = 8 * 1024 * 1024;
let keptBytes = 0;

/** Drops the entries this process keeps: the next scans read the cache folder afresh. */
export function forgetScans(): void {
  kept.clear();
  keptBytes = 0;
}

/** How many entries this process keeps in memory, and their stored bytes. */
export function keptScans(): { entries: number; bytes: number } {
  return { entries: kept.size, bytes: keptBytes };
}

/**
 * `scan` wrapped with the on-disk cache under `cacheDir`: a hit costs one
 * small file read (none when this process has the entry already) and one
 * `stat` per path the scan touched, except the paths found missing in a
 * folder that has not changed since.
 */
export function cachedScan(
  cacheDir: string,
  fs: HostFs,
  scan: (fs: HostFs, dir: string, level: HookLevel) => Promise<Discovery>,
  options: { racyMs?: number } = {},
): Scan {
  const racyMs = options.racyMs ?? RACY_MS;
  return async (dir, level) => {
    const code = await discoveryFingerprint();
    // A folder whose path no system call accepts is not remembered: signing each missing folder
    // above it would keep every one of its thousands of parents' paths (gigabytes of JSON).
    if (code === null || dir.length > MAX_WORK_DIR) return await scan(fs, dir, level);
    const file = await entryFile(cacheDir, dir, level);
    const hit = keptEntry(file, code, dir, level) ?? readEntry(file, code, dir, level);
    if (hit) return hit;
    const touched = new Map<string, number>();
    const started = Date.now();
    const discovery = await scan(recording(fs, touched), dir, level);
    const paths: Entry["paths"] = [];
    const signed = new Set<string>();
    const sign = (path: string, use: number) => {
      const sig = signature(path, use, started - racyMs);
      if (sig !== null) paths.push([path, use, sig]), signed.add(path);
      return sig;
    };
    for (const [path, use] of touched) {
      if (sign(path, use) === null) return discovery; // changed too recently to be trusted
    }
    // The folder of each path found missing: while it is unchanged, so is the missing path. A
    // folder missing too is signed as missing, and no further up: the check then looks at it
    // again (one stat), where signing every missing folder to the nearest one there would keep
    // each of a deep path's parents (a payload's `cwd` of 2,000 missing levels: megabytes).
    for (const [path, , sig] of [...paths]) {
      if (sig !== "-") continue;
      const at = parentOf(path);
      if (at === "" || signed.has(at)) continue;
      if (sign(at, STAT) === null) return discovery;
    }
    const entry: Entry = { format: FORMAT, code, dir, level, paths, discovery };
    const text = JSON.stringify(entry);
    writeEntry(file, text);
    keep(file, entry, text.length);
    return discovery;
  };
}

/** Each folder's entry file (its name hashed once per process: the daemon scans on every call). */
async function entryFile(cacheDir: string, dir: string, level: HookLevel): Promise<string> {
  return `${cacheDir}/scans/${await sha256HexOf(`${dir}\0${level}`)}.json`;
}

/** The discovery of the entry this process has for `file`, if it still holds. */
function keptEntry(file: string, code: string, dir: string, level: HookLevel): Discovery | null {
  const found = kept.get(file);
  if (found === undefined) return null;
  const { entry, bytes } = found;
  if (entry.code === code && entry.dir === dir && entry.level === level && holds(entry)) {
    keep(file, entry, bytes); // the most recently used now
    return entry.discovery;
  }
  forget(file);
  return null;
}

function keep(file: string, entry: Entry, bytes: number): void {
  forget(file);
  if (bytes > KEPT_BYTES / 4) return;
  while (kept.size >= KEPT_ENTRIES || (kept.size > 0 && keptBytes + bytes > KEPT_BYTES)) {
    forget(kept.keys().next().value!);
  }
  kept.set(file, { entry, bytes });
  keptBytes += bytes;
}

function forget(file: string): void {
  keptBytes -= kept.get(file)?.bytes ?? 0;
  kept.delete(file);
}

function readEntry(file: string, code: string, dir: string, level: HookLevel): Discovery | null {
  let entry: Entry;
  let bytes: Uint8Array;
  try {
    bytes = Deno.readFileSync(file);
    if (bytes.length > MAX_ENTRY_BYTES) return null;
    entry = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return null; // none yet, or unreadable: scan
  }
  if (
    entry?.format !== FORMAT || entry.code !== code || entry.dir !== dir || entry.level !== level ||
    !Array.isArray(entry.paths) || !Array.isArray(entry.discovery?.hooks) ||
    !Array.isArray(entry.discovery?.problems) || !holds(entry)
  ) return null;
  keep(file, entry, bytes.length);
  return entry.discovery;
}

/**
 * Every signature `entry` records still holds. A path that was missing (`-`:
 * nothing there, not even a link to nothing) is not looked at again while the
 * folder it would be in is unchanged: creating, removing or renaming anything
 * in a folder changes the folder's modification time, and replacing the folder
 * its inode.
 */
function holds(entry: Entry): boolean {
  /** Folders unchanged, and paths still missing. */
  const unchanged = new Set<string>(), missing = new Set<string>();
  const gone: [string, number][] = [];
  for (const [path, use, sig] of entry.paths) {
    if (sig === "-") {
      gone.push([path, use]);
      continue;
    }
    if (signature(path, use, Infinity) !== sig) return false;
    if (sig.startsWith("d:")) unchanged.add(path);
  }
  // Shorter paths first: a missing folder is settled before the paths under it.
  gone.sort((a, b) => a[0].length - b[0].length);
  for (const [path, use] of gone) {
    const parent = parentOf(path);
    if (!unchanged.has(parent) && !missing.has(parent) && signature(path, use, Infinity) !== "-") {
      return false;
    }
    missing.add(path);
  }
  return true;
}

/** The folder `path` is in ("" for a path right under the root). */
function parentOf(path: string): string {
  return path.slice(0, path.lastIndexOf("/"));
}

/** Writes through a temporary name, so a reader never sees half an entry. Best effort. */
function writeEntry(file: string, text: string): void {
  try {
    writeAtomicSync(file, text, { parents: true });
  } catch {
    // A read-only or full cache folder costs speed, never correctness.
  }
}

/**
 * What discovery saw at `path`: kind, size, times, inode, device and mode
 * (links followed), plus the listing of a listed folder and the target of a
 * resolved path; `-` when nothing is there, `-l` when something is that
 * cannot be followed (a link to nothing, which another folder's change could
 * make whole). Null when the path changed at or after `notAfter` (ms since
 * the epoch).
 */
function signature(path: string, use: number, notAfter: number): string | null {
  let info: Deno.FileInfo;
  try {
    info = Deno.statSync(path);
  } catch {
    try {
      Deno.lstatSync(path);
      return "-l";
    } catch {
      return "-";
    }
  }
  const mtime = info.mtime?.getTime() ?? 0;
  const ctime = info.ctime?.getTime() ?? 0;
  if (Math.max(mtime, ctime) >= notAfter) return null;
  const kind = info.isFile ? "f" : info.isDirectory ? "d" : "o";
  let sig = `${kind}:${info.size}:${mtime}:${ctime}:${info.ino}:${info.dev}:${info.mode}`;
  try {
    if (use & LIST) {
      // As discovery lists it: at most one entry past its cap (which it then reports).
      const names: string[] = [];
      for (const e of Deno.readDirSync(path)) {
        names.push(`${e.name}/${e.isDirectory ? "d" : e.isSymlink ? "l" : "f"}`);
        if (names.length > MAX_FOLDER_ENTRIES) break;
      }
      sig += `:${names.sort().join("\0")}`;
    }
    if (use & REAL) {
      sig += `:${Deno.realPathSync(path)}`;
    }
  } catch {
    return "-";
  }
  return sig;
}

/** `fs` noting every path it is asked about. */
function recording(fs: HostFs, touched: Map<string, number>): HostFs {
  const note = (path: string, use: number) => touched.set(path, (touched.get(path) ?? 0) | use);
  return {
    readDir(path, maxEntries): Promise<DirEntry[]> {
      note(path, LIST);
      return fs.readDir(path, maxEntries);
    },
    readTextFile(path, maxBytes) {
      note(path, STAT);
      return fs.readTextFile(path, maxBytes);
    },
    readFile(path, maxBytes) {
      note(path, STAT);
      return fs.readFile(path, maxBytes);
    },
    stat(path): Promise<PathInfo | null> {
      note(path, STAT);
      return fs.stat(path);
    },
    realPath(path) {
      note(path, REAL);
      return fs.realPath(path);
    },
  };
}
