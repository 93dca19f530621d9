/**
 * `validate` for WebAssembly entries: compiles JS/TS and AssemblyScript
 * sources (through the plugin cache, as `dispatch` would), then loads the
 * plugin exactly as the runtime would (size cap, SHA-256 pin, import policy,
 * ABI, instrumentation, compilation) under the default policy, and turns a
 * refusal into a problem.
 *
 * @module
 */
import type { HostFs } from "../core/host.ts";
import { isHookboxError } from "../core/errors.ts";
import type { HookProblem } from "../core/hook/discover.ts";
import type { HookDefinition } from "../core/hook/types.ts";
import { DEFAULT_POLICY, effectiveLimits } from "../core/policy.ts";
import { loadPlugin } from "../runtime-wasm/mod.ts";
import { compileHook } from "../compile/mod.ts";
import { MAX_PLUGIN_BYTES } from "../core/hook/files.ts";

/**
 * The problem that keeps `hook`'s plugin from compiling or loading, or null
 * when it loads (or the hook has no WebAssembly entry).
 */
export async function checkPlugin(fs: HostFs, hook: HookDefinition): Promise<HookProblem | null> {
  const { entry } = hook;
  if (entry.runtime !== "wasm") return null;
  const limits = effectiveLimits(hook.manifest, DEFAULT_POLICY);
  try {
    const bytes = entry.format === "wasm"
      ? await fs.readFile(entry.path, MAX_PLUGIN_BYTES)
      : (await compileHook(hook)).bytes;
    await loadPlugin(bytes, {
      memoryMb: limits.memoryMb,
      moduleKb: limits.moduleKb,
      path: entry.path,
      ...(hook.manifest.sha256 === undefined ? {} : { sha256: hook.manifest.sha256 }),
    });
    return null;
  } catch (err) {
    if (!isHookboxError(err)) {
      const message = `cannot read the plugin: ${err instanceof Error ? err.message : err}`;
      return { code: "HOOK_ENTRY_MISSING", message, path: entry.path, level: hook.level };
    }
    return {
      code: err.code,
      message: err.message,
      path: err.path ?? entry.path,
      ...(err.field === undefined ? {} : { field: err.field }),
      level: hook.level,
    };
  }
}
