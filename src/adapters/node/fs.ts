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
import { open, readdir, realpath, stat } from "node:fs/promises";
import { HookboxError } from "../../errors.ts";
import type { DirEntry, HostFs, PathInfo } from "../../host.ts";

/** File-system capabilities backed by `node:fs/promises` (also works on Deno). */
export const nodeFs: HostFs = {
  async readDir(path: string): Promise<DirEntry[]> {
    const entries = await readdir(path, { withFileTypes: true });
    return entries.map((e) => ({
      name: e.name,
      isDirectory: e.isDirectory(),
      isSymlink: e.isSymbolicLink(),
    }));
  },
  async readTextFile(path, maxBytes) {
    return new TextDecoder().decode(await readCapped(path, maxBytes));
  },
  readFile: (path, maxBytes) => readCapped(path, maxBytes),
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

/** Reads at most `maxBytes` of `path`; a larger file is refused after at most `maxBytes + 1` bytes. */
async function readCapped(path: string, maxBytes: number): Promise<Uint8Array> {
  const file = await open(path, "r");
  try {
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
      const { bytesRead } = await file.read(out, length, out.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > maxBytes) throw tooLarge(`over ${maxBytes}`);
    }
    return out.slice(0, length);
  } finally {
    await file.close();
  }
}
