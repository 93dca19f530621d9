/**
 * The Deno implementation of {@linkcode HostFs}.
 *
 * @module
 */
import type { DirEntry, HostFs, PathInfo } from "../../host.ts";

/** File-system capabilities backed by `Deno.*`. */
export const denoFs: HostFs = {
  async readDir(path: string): Promise<DirEntry[]> {
    const entries: DirEntry[] = [];
    for await (const e of Deno.readDir(path)) {
      entries.push({ name: e.name, isDirectory: e.isDirectory });
    }
    return entries;
  },
  readTextFile: (path) => Deno.readTextFile(path),
  readFile: (path) => Deno.readFile(path),
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
