/**
 * What the core needs from the machine it runs on, as one capability record.
 * The core never touches `Deno.*`; adapters (src/adapters/) fill this in.
 *
 * @module
 */

/** One directory entry. */
export interface DirEntry {
  name: string;
  isDirectory: boolean;
}

/** What a path is, if anything. */
export interface PathInfo {
  kind: "file" | "dir";
  /** Unix executable bit set for the owner (files only). */
  executable: boolean;
}

/** File-system capabilities used by discovery and plugin loading. */
export interface HostFs {
  /** Lists a directory; rejects when it does not exist or cannot be read. */
  readDir(path: string): Promise<DirEntry[]>;
  readTextFile(path: string): Promise<string>;
  readFile(path: string): Promise<Uint8Array>;
  /** Describes a path, or null when nothing is there. */
  stat(path: string): Promise<PathInfo | null>;
}

/** Joins path segments with `/` (hookbox paths are POSIX). */
export function joinPath(...parts: string[]): string {
  return parts.join("/").replace(/\/+/g, "/");
}
