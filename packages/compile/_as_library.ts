/**
 * The hookbox AssemblyScript library (`plugins/as/`), as the compiler sees
 * it: `import { input, stdout, stderr } from "hookbox"` resolves here.
 *
 * @module
 */

/** Files of `plugins/as/`, in a fixed order (the order feeds the cache key). */
export const AS_LIBRARY_FILES: readonly string[] = [
  "index.ts",
  "json.ts",
  "runtime.ts",
  "shell.ts",
  "sink.ts",
  "wasi.ts",
  "_json_reader.ts",
  "_state.ts",
];

/** Where the library sources live, next to this repository's `packages/`. */
export const AS_LIBRARY_DIR: URL = new URL("../../plugins/as/", import.meta.url);

/** Reads every library file through `readText`. */
export async function loadAsLibrary(
  readText: (path: URL) => Promise<string>,
): Promise<Map<string, string>> {
  const texts = await Promise.all(
    AS_LIBRARY_FILES.map((name) => readText(new URL(name, AS_LIBRARY_DIR))),
  );
  return new Map(AS_LIBRARY_FILES.map((name, i) => [name, texts[i] ?? ""]));
}

/**
 * The library files' paths, for signing what was read (a library that is not
 * on a local disk has no path: its URL, which no file has).
 */
export function asLibraryPaths(): string[] {
  return AS_LIBRARY_FILES.map((name) => {
    const url = new URL(name, AS_LIBRARY_DIR);
    return url.protocol === "file:" ? decodeURIComponent(url.pathname) : url.href;
  });
}
