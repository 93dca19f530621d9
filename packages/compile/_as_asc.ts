/**
 * Runs the AssemblyScript compiler (`asc`) in-process over an in-memory file
 * tree, so compilation never touches the real filesystem.
 *
 * @module
 */

import ascPackage from "assemblyscript/package.json" with { type: "json" };

/**
 * Version of the bundled AssemblyScript compiler (part of the cache key),
 * read from its package.json: a cached hook never loads the compiler.
 */
export const ASC_VERSION: string = ascPackage.version;

/** What one `asc` run produced. */
export interface AscOutput {
  /** The module, or `null` when compilation failed. */
  bytes: Uint8Array | null;
  /** Everything the compiler printed (diagnostics, crash reports). */
  diagnostics: string;
}

const OUT_FILE = "__hookbox_out.wasm";

/**
 * Compiles `entry` from the in-memory `files` (paths relative to a virtual
 * base directory) with the given command-line `flags`.
 */
export async function runAsc(
  files: ReadonlyMap<string, string>,
  entry: string,
  flags: readonly string[],
): Promise<AscOutput> {
  const { default: asc } = await import("assemblyscript/asc");
  if (asc.version !== ASC_VERSION) {
    throw new Error(`asc ${asc.version} does not match its package.json (${ASC_VERSION})`);
  }
  let bytes: Uint8Array | null = null;
  const argv = [entry, "--outFile", OUT_FILE, "--noColors", ...flags];
  const result = await withoutProcessExit(() =>
    asc.main(argv, {
      readFile: (name: string) => files.get(normalise(name)) ?? null,
      writeFile: (name: string, data: Uint8Array | string) => {
        if (name === OUT_FILE && data instanceof Uint8Array) bytes = data;
      },
      listFiles: () => [],
    })
  );
  const diagnostics = result.stderr.toString();
  return { bytes: result.error ? null : bytes, diagnostics };
}

function normalise(name: string): string {
  return name.replace(/\\/g, "/").replace(/^\.\//, "");
}

type ProcessLike = { exit: (code?: number) => never };
let guards = 0;
let realExit: ProcessLike["exit"] | undefined;

/**
 * `asc` calls `process.exit(1)` when the compiler itself crashes; a hostile
 * hook must not be able to end the host that way. While any compilation
 * runs, `exit` throws instead.
 */
async function withoutProcessExit<T>(run: () => Promise<T>): Promise<T> {
  const proc = (globalThis as { process?: ProcessLike }).process;
  if (proc === undefined) return await run();
  if (guards++ === 0) {
    realExit = proc.exit;
    proc.exit = (code?: number): never => {
      throw new Error(`AssemblyScript compiler crashed (exit ${code ?? 0})`);
    };
  }
  try {
    return await run();
  } finally {
    if (--guards === 0 && realExit !== undefined) proc.exit = realExit;
  }
}
