/**
 * The Deno implementation of {@linkcode HostFs}.
 *
 * @module
 */
import {
  type DirEntry,
  type HostFs,
  notRegularFile,
  type PathInfo,
  readCapped,
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
 * (see {@linkcode openRegularFile}).
 */
export async function readCappedFile(path: string, maxBytes: number): Promise<Uint8Array> {
  const file = await openRegularFile(path, { follow: true, missing: "throw" });
  if (file === null) throw notRegularFile(path);
  try {
    return await readCapped(path, {
      size: async () => (await file.stat()).size,
      read: async (into) => (await file.read(into)) ?? 0,
    }, maxBytes);
  } finally {
    file.close();
  }
}

/**
 * `path` opened for reading if it is a regular file (itself, unless
 * `follow`), else null: it is looked at before the open (opening a FIFO
 * would wait for a writer, and a device may never end) and the file opened
 * is checked to be the one looked at (`fstat`: the same device and inode),
 * so a link or device put at the path after the look is never read. What
 * cannot be looked at or opened is null too, or with `missing: "throw"` the
 * error of the look.
 */
export async function openRegularFile(
  path: string,
  options: { follow: boolean; missing?: "null" | "throw" },
): Promise<Deno.FsFile | null> {
  const look = options.follow ? Deno.stat(path) : Deno.lstat(path);
  const seen = await (options.missing === "throw" ? look : look.catch(() => null));
  if (!seen?.isFile) return null;
  const file = await Deno.open(path, { read: true }).catch((err) => {
    if (options.missing === "throw") throw err;
    return null;
  });
  if (file === null) return null;
  const opened = await file.stat().catch(() => null);
  if (opened?.isFile && opened.ino === seen.ino && opened.dev === seen.dev) return file;
  file.close();
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
  options: { end: "head" | "tail"; follow: boolean },
): Promise<FileEnd | null> {
  const file = await openRegularFile(path, { follow: options.follow });
  if (file === null) return null;
  try {
    const { size } = await file.stat();
    const start = options.end === "tail" ? Math.max(0, size - max) : 0;
    await file.seek(start, Deno.SeekMode.Start);
    const bytes = new Uint8Array(Math.min(size, max));
    let read = 0;
    while (read < bytes.length) {
      const n = await file.read(bytes.subarray(read));
      if (n === null) break;
      read += n;
    }
    return { bytes: bytes.subarray(0, read), whole: start === 0 && read === size };
  } finally {
    file.close();
  }
}

/** A file's identity for trusting an earlier check of its bytes: size, times, inode, device. */
export function fileSignature(info: Deno.FileInfo): string {
  return [info.size, info.mtime?.getTime(), info.ctime?.getTime(), info.ino, info.dev].join(":");
}
