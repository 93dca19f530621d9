/**
 * Turns a hook's entry into plugin bytes: reads `.wasm` files as they are,
 * compiles JS/TS (QuickJS engine plugin) and AssemblyScript sources, each cached
 * on disk by content hash. The compilers load lazily, so a host that only runs
 * `.wasm` plugins never pays for esbuild or asc.
 *
 * @module
 */
import { HookboxError } from "../errors.ts";
import type { HookDefinition } from "../hook/types.ts";

/** A compiled (or read) plugin. */
export interface CompiledPlugin {
  bytes: Uint8Array;
  /** Hex SHA-256 of `bytes`. */
  sha256: string;
  /** True when a compiler's cache answered. Always true for `.wasm` entries. */
  cached: boolean;
}

/** Options of {@linkcode compileHook}. */
export interface CompileHookOptions {
  /** Where compiled plugins are cached. @default defaultCacheDir() */
  cacheDir?: string;
}

/** `$HOOKBOX_CACHE_DIR`, else `$XDG_CACHE_HOME/hookbox`, else `~/.cache/hookbox`. */
export function defaultCacheDir(): string {
  const explicit = Deno.env.get("HOOKBOX_CACHE_DIR");
  if (explicit) return explicit;
  const xdg = Deno.env.get("XDG_CACHE_HOME");
  if (xdg) return `${xdg}/hookbox`;
  const home = Deno.env.get("HOME");
  return home ? `${home}/.cache/hookbox` : "/tmp/hookbox-cache";
}

/** Plugin bytes for a WebAssembly-runtime hook; throws `COMPILE_*` / `TOOLCHAIN_MISSING`. */
export async function compileHook(
  hook: HookDefinition,
  options: CompileHookOptions = {},
): Promise<CompiledPlugin> {
  const { entry } = hook;
  if (entry.runtime !== "wasm") {
    throw new HookboxError("COMPILE_FAILED", `hook "${hook.name}" has no WebAssembly entry`, {
      path: hook.dir,
    });
  }
  const cacheDir = options.cacheDir ?? defaultCacheDir();
  if (entry.format === "js") {
    const { compileJsHook } = await import("./js.ts");
    return await compileJsHook(entry.path, { cacheDir });
  }
  if (entry.format === "as") {
    const { compileAsHook } = await import("./as.ts");
    return await compileAsHook(entry.path, { cacheDir });
  }
  const bytes = await Deno.readFile(entry.path);
  return { bytes, sha256: await sha256Hex(bytes), cached: true };
}

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
