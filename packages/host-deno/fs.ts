/**
 * The Deno implementation of {@linkcode HostFs}.
 *
 * @module
 */
import { constants as fsConstants, type FileHandle, open } from "node:fs/promises";
import {
  type DirEntry,
  type HostFs,
  notRegularFile,
  type PathInfo,
  readCappedHandle,
} from "../core/host.ts";

/** File-system capabilities backed by `Deno.*`. */
export const denoFs: HostFs = {
  async readDir(path: string, maxEntries = Infinity): Promise<DirEntry[]> {
    const entries: DirEntry[] = [];
    for await (const e of Deno.readDir(path)) {
      entries.push({ name: e.name, isDirectory: e.isDirectory, isSymlink: e.isSymlink });
      if (entries.length > maxEntries) break;
    }
    return entries;
  },
  async readTextFile(path, maxBytes) {
    return new TextDecoder().decode(await readCappedFile(path, maxBytes));
  },
  readFile: (path, maxBytes) => readCappedFile(path, maxBytes),
  // The system call itself takes a couple of µs; Deno's async form adds a round trip through its
  // blocking-task threads (~60 µs), and the daemon resolves each JS or AssemblyScript entry of
  // every call (`confined`).
  realPath(path) {
    try {
      return Promise.resolve(Deno.realPathSync(path));
    } catch (err) {
      return Promise.reject(err);
    }
  },
  async stat(path: string): Promise<PathInfo | null> {
    try {
      const info = await Deno.stat(path);
      if (!info.isFile && !info.isDirectory) return null;
      return {
        kind: info.isDirectory ? "dir" : "file",
        executable: info.isFile && ((info.mode ?? 0) & 0o100) !== 0,
      };
    } catch (err) {
      if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
        return null;
      }
      throw err;
    }
  },
};

/** The user hook folder: `$XDG_CONFIG_HOME/agents/hooks`, default `~/.config/agents/hooks`. */
export function defaultUserDir(): string | null {
  const xdg = Deno.env.get("XDG_CONFIG_HOME");
  if (xdg) return `${xdg}/agents/hooks`;
  const home = Deno.env.get("HOME");
  return home ? `${home}/.config/agents/hooks` : null;
}

/** Absolute form of `path` against the current directory. */
export function absolute(path: string): string {
  return path.startsWith("/") ? path : `${Deno.cwd()}/${path}`.replace(/\/\.\/|\/\.$/g, "/");
}

/**
 * Reads at most `maxBytes` of `path`, refusing a larger file without reading
 * it all (its size is checked first and the read stops one byte past the cap,
 * in case the file grows meanwhile), and refusing anything but a regular file
 * (checked on the file as opened, and opened without waiting for a FIFO's
 * writer: see {@linkcode openRegularFile}).
 */
export async function readCappedFile(path: string, maxBytes: number): Promise<Uint8Array> {
  if (!(await Deno.stat(path)).isFile) throw notRegularFile(path);
  const file = await openRegularFile(path);
  if (file === null) throw notRegularFile(path);
  try {
    return await readCappedHandle(path, file, maxBytes);
  } finally {
    await file.close();
  }
}

/**
 * `path` opened for reading if it is a regular file, else null (also when it
 * cannot be opened). Opened non-blocking (`O_NONBLOCK`: a FIFO does not hold
 * the open until a writer comes) and, unless `follow`, without following a
 * symbolic link (`O_NOFOLLOW`); then checked as opened (`fstat`), so nothing
 * put at the path after an earlier look (a FIFO, `/dev/zero`, a link) is read.
 */
export async function openRegularFile(
  path: string,
  options: { follow?: boolean } = {},
): Promise<FileHandle | null> {
  const flags = fsConstants.O_RDONLY | (fsConstants.O_NONBLOCK ?? 0) |
    (options.follow === false ? fsConstants.O_NOFOLLOW ?? 0 : 0);
  const file = await open(path, flags).catch(() => null);
  if (file === null) return null;
  if ((await file.stat().catch(() => null))?.isFile()) return file;
  await file.close();
  return null;
}

/** Bytes read from one end of a file (see {@linkcode readFileEnd}). */
export interface FileEnd {
  /** The bytes read. */
  bytes: Uint8Array;
  /** The bytes are the whole file. */
  whole: boolean;
}

/**
 * The first (`end: "head"`) or last (`"tail"`) `max` bytes of `path` if it
 * is a regular file, else null (see {@linkcode openRegularFile}): for files
 * whose path comes from a payload or a repository, read only as far as needed.
 */
export async function readFileEnd(
  path: string,
  max: number,
  options: { end: "head" | "tail"; follow?: boolean },
): Promise<FileEnd | null> {
  const file = await openRegularFile(path, options);
  if (file === null) return null;
  try {
    const { size } = await file.stat();
    const start = options.end === "tail" ? Math.max(0, size - max) : 0;
    const bytes = new Uint8Array(Math.min(size, max));
    let read = 0;
    while (read < bytes.length) {
      const { bytesRead } = await file.read(bytes, read, bytes.length - read, start + read);
      if (bytesRead === 0) break;
      read += bytesRead;
    }
    return { bytes: bytes.subarray(0, read), whole: start === 0 && read === size };
  } finally {
    await file.close();
  }
}

/** A file's identity for trusting an earlier check of its bytes: size, times, inode, device. */
export function fileSignature(info: Deno.FileInfo): string {
  return [info.size, info.mtime?.getTime(), info.ctime?.getTime(), info.ino, info.dev].join(":");
}
