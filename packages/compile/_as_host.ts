/**
 * The Deno side of AssemblyScript compilation: file reads and cache writes.
 * The compiler itself ({@linkcode compileAsSource}) speaks only Web APIs.
 *
 * @module
 */
import { writeAtomic } from "../host-deno/atomic.ts";

/** File access the AssemblyScript compiler front end needs from its host. */
export interface CompileHost {
  /** Reads a UTF-8 text file. Throws when it does not exist. */
  readText(path: string | URL): Promise<string>;
  /** Reads a file's bytes, or `null` when it does not exist. */
  readBytes(path: string): Promise<Uint8Array | null>;
  /** Writes `data` to `path` atomically, creating the parent folder. */
  writeBytes(path: string, data: Uint8Array): Promise<void>;
}

/** {@linkcode CompileHost} backed by `Deno` file APIs. */
export const denoCompileHost: CompileHost = {
  readText: (path) => Deno.readTextFile(path),
  async readBytes(path) {
    try {
      return await Deno.readFile(path);
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return null;
      throw err;
    }
  },
  writeBytes: (path, data) => writeAtomic(path, data, { parents: true }),
};
