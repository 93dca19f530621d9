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
import { canBoundCommands } from "../host-deno/outlive.ts";
import { buildCapacity, buildTime, OUT_OF_BUDGET, outOfBudget } from "./_build_time.ts";
import { ENGINE_SRC } from "./_js_engine.ts";

/**
 * CPU time building one plugin may take (a real hook's takes 1–2 s: Wizer
 * compiles the engine on all cores). A function-style hook's top level runs
 * here, at build time: a hostile one must not hold the compiler, the service
 * uploading it, or an agent's hook call (Copilot ends one after 30 s, and lets
 * its tool run). CPU time, not time on the clock: a build that fails at it
 * fails the same way on a busy machine, so the failure is recorded
 * (`compileJsHook`), and a sound hook is never failed for the machine's load.
 */
export const SNAPSHOT_CPU_MS = 10_000;

/**
 * Time on the clock a build may take at most, whatever its CPU time: only a
 * machine busy for minutes reaches it, and a build stopped at it is not
 * recorded as failed (a later call builds it again).
 */
export const SNAPSHOT_WALL_MS = 120_000;

/** Output kept from Wizer (a hook's top level may print). */
const MAX_BUILD_OUTPUT = 64 * 1024;

/** Returns the pre-initialised plugin for `bundle` on the engine at `enginePath`. */
export async function snapshotEngine(
  enginePath: string,
  bundle: string,
  cpuMs = SNAPSHOT_CPU_MS,
): Promise<Uint8Array> {
  // Where the CPU limit cannot be set (no coreutils `timeout` to wrap Wizer), the clock bounds
  // the build at the CPU limit's length instead.
  const wallMs = canBoundCommands() ? Math.max(SNAPSHOT_WALL_MS, 4 * cpuMs) : cpuMs;
  const limit = Math.min(wallMs, buildTime.left());
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
      { timeoutMs: limit, cpuMs, maxOutput: MAX_BUILD_OUTPUT },
    );
    if (result.cpuLimited) {
      throw new HookboxError(
        "COMPILE_FAILED",
        `the hook did not finish building in ${cpuMs} ms of CPU time (a function-style hook's ` +
          "top level runs when it is built)",
      );
    }
    if (result.timedOut) {
      // The clock, not the hook's CPU: the machine's load or this process's budget. Not
      // recorded, so a later call builds it again.
      const why = limit < wallMs
        ? `this process's ${buildCapacity()} ms of building time ran out`
        : `the build took over ${wallMs} ms on the clock (the machine is busy)`;
      throw new HookboxError("COMPILE_FAILED", `not built: ${why}`, {
        cause: OUT_OF_BUDGET,
      });
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
