/**
 * Entry resolution (SPEC §2): WebAssembly first, then subprocess, then prompt.
 *
 * @module
 */
import { HookboxError } from "../errors.ts";
import { type HostFs, joinPath } from "../host.ts";
import type { Manifest } from "../schema/manifest.ts";
import type { HookEntry, WasmFormat } from "./types.ts";

const WASM_ENTRIES: ReadonlyArray<[string, WasmFormat]> = [
  ["plugin.wasm", "wasm"],
  ["scripts/run.wasm", "wasm"],
  ["scripts/run.js", "js"],
  ["scripts/run.mjs", "js"],
  ["scripts/run.ts", "js"],
  ["scripts/run.as.ts", "as"],
];

const SUBPROCESS_ENTRIES: ReadonlyArray<[string, (path: string) => string[]]> = [
  ["scripts/run", (path) => [path]],
  ["scripts/run.sh", (path) => ["bash", path]],
  ["scripts/run.py", (path) => ["python3", path]],
];

/** Finds how the hook in `dir` runs; throws `HOOK_ENTRY_MISSING` when nothing fits. */
export async function resolveEntry(
  fs: HostFs,
  dir: string,
  manifest: Manifest,
): Promise<HookEntry> {
  for (const [file, format] of WASM_ENTRIES) {
    const path = joinPath(dir, file);
    if ((await fs.stat(path))?.kind === "file") return { runtime: "wasm", format, path };
  }
  for (const [file, command] of SUBPROCESS_ENTRIES) {
    const path = joinPath(dir, file);
    const info = await fs.stat(path);
    if (info?.kind !== "file") continue;
    if (file === "scripts/run" && !info.executable) {
      throw new HookboxError("HOOK_ENTRY_MISSING", "scripts/run exists but is not executable", {
        path,
      });
    }
    return { runtime: "subprocess", path, command: command(path) };
  }
  if (manifest.inject) return { runtime: "prompt" };
  // A folder made by `hookbox init --lang c|rust` builds its plugin.wasm with build.sh.
  const build = (await fs.stat(joinPath(dir, "build.sh")))?.kind === "file"
    ? "; build.sh is here: run it to make plugin.wasm"
    : "";
  throw new HookboxError(
    "HOOK_ENTRY_MISSING",
    "no entry: expected plugin.wasm, scripts/run.{wasm,js,mjs,ts,as.ts}, scripts/run, " +
      "scripts/run.sh, scripts/run.py, or `inject` in the frontmatter" + build,
    { path: dir },
  );
}
