/**
 * What the core needs from the machine it runs on, as one capability record.
 * The core never touches `Deno.*`; adapters (`packages/host-deno`, `packages/host-node`) fill this in.
 *
 * @module
 */
import { HookboxError } from "./errors.ts";

/** One directory entry. */
export interface DirEntry {
  /** The entry's name (no path). */
  name: string;
  /** The entry is a directory. */
  isDirectory: boolean;
  /** The entry is a symbolic link (`isDirectory` is then false). */
  isSymlink: boolean;
}

/** What a path is, if anything. */
export interface PathInfo {
  /** A regular file or a directory. */
  kind: "file" | "dir";
  /** Unix executable bit set for the owner (files only). */
  executable: boolean;
}

/** File-system capabilities used by discovery and plugin loading. */
export interface HostFs {
  /**
   * Lists a directory; rejects when it does not exist or cannot be read.
   * With `maxEntries`, stops after `maxEntries + 1` entries (in the order the
   * file system gives them): a folder of a million files is not read whole.
   */
  readDir(path: string, maxEntries?: number): Promise<DirEntry[]>;
  /**
   * Reads a UTF-8 file of at most `maxBytes` bytes; a larger one rejects with
   * `HookboxError("HOOK_FILE_TOO_LARGE")` before more than `maxBytes + 1`
   * bytes are read.
   */
  readTextFile(path: string, maxBytes: number): Promise<string>;
  /** Reads a file of at most `maxBytes` bytes (as {@linkcode readTextFile}). */
  readFile(path: string, maxBytes: number): Promise<Uint8Array>;
  /** Describes a path (following links), or null when nothing is there. */
  stat(path: string): Promise<PathInfo | null>;
  /** The canonical absolute path, every symbolic link resolved; rejects when missing. */
  realPath(path: string): Promise<string>;
}

/** An open file as {@linkcode readCapped} needs it. */
export interface CappedSource {
  /** The file's size now, bytes. */
  size(): Promise<number>;
  /** Reads into `into`; the count read, 0 at the end. */
  read(into: Uint8Array): Promise<number>;
}

/**
 * Reads at most `maxBytes` from `file` (the one at `path`), refusing a larger
 * file with `HOOK_FILE_TOO_LARGE` without reading it all: its size is checked
 * first and the read stops one byte past the cap, in case the file grows
 * meanwhile.
 */
export async function readCapped(
  path: string,
  file: CappedSource,
  maxBytes: number,
): Promise<Uint8Array> {
  const tooLarge = (size: number | string) =>
    new HookboxError(
      "HOOK_FILE_TOO_LARGE",
      `file is ${size} bytes, over the ${maxBytes}-byte cap`,
      {
        path,
      },
    );
  const size = await file.size();
  if (size > maxBytes) throw tooLarge(size);
  // Sized for the file as it is now (a cap is often far larger than the file); grown, up to one
  // byte past the cap, only if the file grows while it is read.
  let out = new Uint8Array(Math.min(size, maxBytes) + 1);
  let length = 0;
  for (;;) {
    if (length === out.length) {
      const grown = new Uint8Array(Math.min(out.length * 2, maxBytes + 1));
      grown.set(out);
      out = grown;
    }
    const n = await file.read(out.subarray(length));
    if (n === 0) break;
    length += n;
    if (length > maxBytes) throw tooLarge(`over ${maxBytes}`);
  }
  return out.slice(0, length);
}

/**
 * The error for a path that is not a regular file where one is read: a FIFO
 * would block the read until some writer came, a device might never end.
 */
export function notRegularFile(path: string): HookboxError {
  return new HookboxError("HOOK_DIR_UNREADABLE", `${path} is not a regular file`, { path });
}

/** Joins path segments with `/` (hookbox paths are POSIX). */
export function joinPath(...parts: string[]): string {
  return parts.join("/").replace(/\/+/g, "/");
}

/** True when `path` is `root` or inside it (both absolute, canonical). */
export function isInside(path: string, root: string): boolean {
  const r = root.replace(/\/+$/, "");
  return path === r || path.startsWith(`${r}/`) || r === "";
}
