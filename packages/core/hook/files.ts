/**
 * Bounds on what hookbox reads from a hook folder before it parses anything:
 * every file is size-capped at read time, and every path a hook uses must
 * resolve (symbolic links followed) inside the hook folder's own real path.
 *
 * @module
 */
import { HookboxError } from "../errors.ts";
import { type HostFs, isInside } from "../host.ts";

/** Largest HOOK.md read (frontmatter and body). */
export const MAX_MANIFEST_BYTES = 64 * 1024;
/** Largest script entry (JS/TS/AssemblyScript source) compiled. */
export const MAX_SOURCE_BYTES = 4 * 1024 * 1024;
/** Largest `.wasm` entry read; the policy's `moduleKb` then applies. */
export const MAX_PLUGIN_BYTES = 64 * 1024 * 1024;
/** Most files an uploaded hook folder may hold (`HOOK_TOO_MANY` past it). */
export const MAX_UPLOAD_FILES = 64;
/** Most hook folders taken from one folder of hooks; the rest are reported. */
export const MAX_HOOKS_PER_FOLDER = 1000;
/**
 * Most entries (files and folders) a folder of hooks may hold: past it none
 * is read and the folder is reported, since keeping, signing and sorting the
 * names of 200,000 files cost every hook call most of a second.
 */
export const MAX_FOLDER_ENTRIES = 10_000;
/**
 * Most HOOK.md text read from one folder of hooks, in characters, before the
 * hook folders after it are reported instead of read. Parsing YAML costs up
 * to ~1.5 µs a character: a repository's 1,000 manifests of 16 KiB would
 * hold every hook call's first discovery for 10-60 s, past an agent's hook
 * timeout. Real manifests are under 2 KB.
 */
export const MAX_FOLDER_MANIFEST_CHARS = 1024 * 1024;
/**
 * Most instructions the `matcher` patterns of one folder of hooks may come
 * to (RE2's program size, estimated from each pattern's text), before the
 * hook folders after it are reported instead of read. Validating a manifest
 * compiles its patterns, at ~1–2 µs an instruction: a repository's thousand
 * hooks with two 4,096-instruction patterns each held a call's discovery
 * 10–15 s, outside the event's deadline, with an agent's 30 s hook timeout
 * to share with it. This many take well under a second; real patterns are a
 * few dozen instructions each.
 */
export const MAX_FOLDER_MATCHER_INSTRUCTIONS = 1 << 19;

/**
 * Throws `HOOK_PATH_OUTSIDE` unless `path` resolves inside `dir` (both with
 * every symbolic link resolved). Returns the real path of `path`.
 */
export async function confined(fs: HostFs, dir: string, path: string): Promise<string> {
  const [root, real] = await Promise.all([fs.realPath(dir), fs.realPath(path)]);
  if (!isInside(real, root)) {
    throw new HookboxError(
      "HOOK_PATH_OUTSIDE",
      `${path} resolves to ${real}, outside the hook folder ${root}; a hook may use only its own files`,
      { path },
    );
  }
  return real;
}
