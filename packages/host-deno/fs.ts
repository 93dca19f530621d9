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
 * before opening it (opening a FIFO blocks until a writer comes).
 */
export async function readCappedFile(path: string, maxBytes: number): Promise<Uint8Array> {
  if (!(await Deno.stat(path)).isFile) throw notRegularFile(path);
  using file = await Deno.open(path, { read: true });
  return await readCapped(path, {
    size: async () => (await file.stat()).size,
    read: async (into) => (await file.read(into)) ?? 0,
  }, maxBytes);
}

/** A file's identity for trusting an earlier check of its bytes: size, times, inode, device. */
export function fileSignature(info: Deno.FileInfo): string {
  return [info.size, info.mtime?.getTime(), info.ctime?.getTime(), info.ino, info.dev].join(":");
}
