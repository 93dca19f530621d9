/**
 * Snapshots the engine with a hook's bundle compiled to bytecode, using
 * Wizer (Deno-only). Wizer runs `wizer.initialize`, which reads the bundle
 * from stdin, and writes out the initialised module: `_start` then runs the
 * precompiled bytecode without parsing anything.
 *
 * @module
 */
import { HookboxError } from "../core/errors.ts";
import { runCommand, WIZER_BIN } from "./_js_toolchain.ts";
import { BUILD_BUDGET_MS, buildTime, OUT_OF_BUDGET, outOfBudget } from "./_build_time.ts";
import { ENGINE_SRC } from "./_js_engine.ts";

/**
 * How long building one plugin may take (a real hook's takes well under a
 * second). A function-style hook's top level runs here, at build time: a
 * hostile one must not hold the compiler, the service uploading it, or an
 * agent's hook call (Copilot ends one after 30 s, and lets its tool run).
 */
export const SNAPSHOT_TIMEOUT_MS = 10_000;

/** Output kept from Wizer (a hook's top level may print). */
const MAX_BUILD_OUTPUT = 64 * 1024;

/** Returns the pre-initialised plugin for `bundle` on the engine at `enginePath`. */
export async function snapshotEngine(
  enginePath: string,
  bundle: string,
  timeoutMs = SNAPSHOT_TIMEOUT_MS,
): Promise<Uint8Array> {
  const limit = Math.min(timeoutMs, buildTime.left());
  if (limit < 100) throw outOfBudget();
  // Named for hookbox's sweep of what killed builds leave (host-deno/cache_trim.ts).
  const out = await Deno.makeTempFile({ prefix: "hookbox-build-", suffix: ".wasm" });
  try {
    const result = await runCommand(
      WIZER_BIN,
      [
        enginePath,
        "-o",
        out,
        "--init-func",
        "wizer.initialize",
        "--allow-wasi",
        "--inherit-stdio=true",
        "--preload",
        `hookbox=${ENGINE_SRC}/interrupt_stub.wat`,
      ],
      new TextEncoder().encode(bundle),
      { timeoutMs: limit, maxOutput: MAX_BUILD_OUTPUT },
    );
    if (result.timedOut && limit < timeoutMs) {
      throw new HookboxError(
        "COMPILE_FAILED",
        `not built: this process's ${BUILD_BUDGET_MS} ms of building ran out; a later call builds it`,
        { cause: OUT_OF_BUDGET },
      );
    }
    if (result.timedOut) {
      throw new HookboxError(
        "COMPILE_FAILED",
        `the hook did not finish building in ${timeoutMs} ms (a function-style hook's top level runs when it is built)`,
      );
    }
    if (result.code !== 0) {
      const reason = result.stderr.split("\nError:")[0]?.trim() || result.stderr.trim();
      throw new HookboxError("COMPILE_FAILED", `the hook does not compile: ${reason}`);
    }
    return await Deno.readFile(out);
  } finally {
    await Deno.remove(out).catch(() => {});
  }
}
