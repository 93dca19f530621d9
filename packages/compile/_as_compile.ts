/**
 * AssemblyScript source → a WASI command plugin: wraps the hook's `hook()` in
 * a generated `_start`, compiles against the hookbox library and checks that
 * the result imports nothing but the library's three WASI functions.
 *
 * @module
 */

import { HookboxError } from "../core/errors.ts";
import { runAsc } from "./_as_asc.ts";

/** Compiler flags; part of the cache key. */
export const AS_FLAGS: readonly string[] = [
  "--optimizeLevel",
  "3",
  "--shrinkLevel",
  "0",
  "--runtime",
  "minimal",
  "--path",
  "lib",
  "--use",
  "abort=~lib/hookbox/runtime/abort",
  "--use",
  "trace=~lib/hookbox/runtime/trace",
];

const USER_FILE = "hook/main.ts";
const ENTRY_FILE = "hook/__hookbox_entry.ts";
const DIAGNOSTIC_LINES = 20;
/** What the library imports (plugins/as/wasi.ts): the event in, the streams out, the exit code. */
const LIBRARY_IMPORTS: ReadonlySet<string> = new Set([
  "wasi_snapshot_preview1.fd_read",
  "wasi_snapshot_preview1.fd_write",
  "wasi_snapshot_preview1.proc_exit",
]);

// Generated entry (a WASI command's `_start`): resets per-call state (warm
// instances are reused), hands the streams to the host, every few calls
// frees the garbage (the minimal runtime's collector only runs when called;
// no stack roots exist between calls, so collecting here is safe), and exits
// with the hook's code.
const ENTRY_SOURCE = `import { hook as userHook } from "./main";
import { begin, exit, flush, shouldCollect } from "hookbox/runtime";
export function _start(): void {
  begin();
  const code = userHook();
  flush();
  if (shouldCollect()) __collect();
  exit(code);
}
`;

const IMPORT_HINTS: Record<string, string> = {
  "env.seed": "Math.random has no entropy source in hookbox",
  "env.Date.now": "Date.now is not available in hookbox",
};

/**
 * Compiles one AssemblyScript hook. `library` maps file names of the hookbox
 * AssemblyScript library (`index.ts`, ...) to their sources; `path` is used
 * in error messages.
 */
export async function compileAsSource(
  source: string,
  library: ReadonlyMap<string, string>,
  path: string,
): Promise<Uint8Array> {
  const files = new Map<string, string>([[USER_FILE, source], [ENTRY_FILE, ENTRY_SOURCE]]);
  for (const [name, text] of library) files.set(`lib/hookbox/${name}`, text);
  const { bytes, diagnostics } = await runAsc(files, ENTRY_FILE, AS_FLAGS);
  if (bytes === null) {
    throw new HookboxError("COMPILE_FAILED", firstLines(diagnostics, path), { path });
  }
  checkImports(bytes, path);
  return bytes;
}

function firstLines(diagnostics: string, path: string): string {
  const lines = diagnostics.split(USER_FILE).join(path).split("\n")
    .filter((line) => line.trim() !== "" && !line.startsWith("FAILURE"));
  const head = lines.slice(0, DIAGNOSTIC_LINES).join("\n");
  return `AssemblyScript compilation failed:\n${head || "(no diagnostics)"}`;
}

function checkImports(bytes: Uint8Array, path: string): void {
  const module = new WebAssembly.Module(bytes as Uint8Array<ArrayBuffer>);
  for (const { module: from, name } of WebAssembly.Module.imports(module)) {
    const id = `${from}.${name}`;
    if (LIBRARY_IMPORTS.has(id)) continue;
    const hint = IMPORT_HINTS[id] ?? "only the hookbox library may reach the host";
    throw new HookboxError("COMPILE_API_DENIED", `hook imports ${id}: ${hint}`, { path });
  }
}
