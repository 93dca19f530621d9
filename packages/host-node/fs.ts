/**
 * The Node implementation of {@linkcode HostFs} (`node:fs/promises`), for
 * platforms that run the Web-API core on Node and keep hook folders on disk:
 *
 * @example
 * ```ts ignore
 * import { createCoreExecutor, createWasmRuntime } from "@hookbox/hookbox";
 * import { nodeFs } from "@hookbox/hookbox/node";
 *
 * const executor = createCoreExecutor({
 *   fs: nodeFs,
 *   platformDirs: ["/srv/hooks"],
 *   runtimes: {
 *     wasm: createWasmRuntime({ loadBytes: ({ entry }) => nodeFs.readFile(entry.runtime === "wasm" ? entry.path : "", 8 << 20) }),
 *   },
 * });
 * ```
 *
 * @module
 */
import { constants, open, opendir, realpath, stat } from "node:fs/promises";
import {
  type DirEntry,
  type HostFs,
  notRegularFile,
  type PathInfo,
  readCapped,
} from "../core/host.ts";

/** File-system capabilities backed by `node:fs/promises` (also works on Deno). */
export const nodeFs: HostFs = {
  async readDir(path: string, maxEntries = Infinity): Promise<DirEntry[]> {
    const entries: DirEntry[] = [];
    const dir = await opendir(path);
    try {
      for (let e = await dir.read(); e !== null; e = await dir.read()) {
        entries.push({ name: e.name, isDirectory: e.isDirectory(), isSymlink: e.isSymbolicLink() });
        if (entries.length > maxEntries) break;
      }
    } finally {
      await dir.close().catch(() => {});
    }
    return entries;
  },
  async readTextFile(path, maxBytes) {
    return new TextDecoder().decode(await readCappedNode(path, maxBytes));
  },
  readFile: (path, maxBytes) => readCappedNode(path, maxBytes),
  realPath: (path) => realpath(path),
  async stat(path: string): Promise<PathInfo | null> {
    try {
      const info = await stat(path);
      if (!info.isFile() && !info.isDirectory()) return null;
      return {
        kind: info.isDirectory() ? "dir" : "file",
        executable: info.isFile() && (info.mode & 0o100) !== 0,
      };
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (code === "ENOENT" || code === "ENOTDIR") return null;
      throw err;
    }
  },
};

/**
 * Reads at most `maxBytes` of `path` (see {@linkcode readCapped}); anything
 * but a regular file is refused. Opened non-blocking, so a FIFO is refused
 * by the open file's own type rather than blocking the open.
 */
async function readCappedNode(path: string, maxBytes: number): Promise<Uint8Array> {
  const file = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    if (!(await file.stat()).isFile()) throw notRegularFile(path);
    return await readCapped(path, {
      size: async () => (await file.stat()).size,
      read: async (into) => (await file.read(into, 0, into.length, null)).bytesRead,
    }, maxBytes);
  } finally {
    await file.close();
  }
}
