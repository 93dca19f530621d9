/**
 * The Deno implementation of {@linkcode HostFs}.
 *
 * @module
 */
import { HookboxError } from "../../errors.ts";
import type { DirEntry, HostFs, PathInfo } from "../../host.ts";

/** File-system capabilities backed by `Deno.*`. */
export const denoFs: HostFs = {
  async readDir(path: string): Promise<DirEntry[]> {
    const entries: DirEntry[] = [];
    for await (const e of Deno.readDir(path)) {
      entries.push({ name: e.name, isDirectory: e.isDirectory, isSymlink: e.isSymlink });
    }
    return entries;
  },
  async readTextFile(path, maxBytes) {
    return new TextDecoder().decode(await readCappedFile(path, maxBytes));
  },
  readFile: (path, maxBytes) => readCappedFile(path, maxBytes),
  realPath: (path) => Deno.realPath(path),
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
 * in case the file grows meanwhile).
 */
export async function readCappedFile(path: string, maxBytes: number): Promise<Uint8Array> {
  using file = await Deno.open(path, { read: true });
  const tooLarge = (size: number | string) =>
    new HookboxError(
      "HOOK_FILE_TOO_LARGE",
      `file is ${size} bytes, over the ${maxBytes}-byte cap`,
      {
        path,
      },
    );
  const { size } = await file.stat();
  if (size > maxBytes) throw tooLarge(size);
  const out = new Uint8Array(maxBytes + 1);
  let length = 0;
  for (;;) {
    const n = await file.read(out.subarray(length));
    if (n === null) break;
    length += n;
    if (length > maxBytes) throw tooLarge(`over ${maxBytes}`);
  }
  return out.slice(0, length);
}
