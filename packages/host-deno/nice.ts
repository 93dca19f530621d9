/**
 * The nice values hookbox runs its work at, and commands started at one.
 * Apart from `thread_priority.ts` (which needs Node's `os` module, ~10 ms to
 * load in a Deno process) so that a one-shot CLI that may start a build
 * loads nothing it does not use.
 *
 * @module
 */

/** The nice value plugin worker threads run at (0 is the default; 19 the lowest). */
export const PLUGIN_THREAD_NICE = 10;

/**
 * The nice value a plugin worker drops to while one call runs longer than
 * {@linkcode LONG_CALL_MS}: below the other plugin workers, so a tenant whose
 * hooks spin to their limits takes CPU from nobody's hooks but its own.
 */
export const LONG_CALL_NICE = 19;

/** A call that has run this long on a plugin worker counts as long, ms. */
export const LONG_CALL_MS = 10;

/**
 * `cmd args` run at nice `nice` (through the system's `nice`, so the
 * process's threads and children all get it), or unchanged where there is no
 * `nice` to run. The service compiles uploads this way, so a compiler never
 * takes a core from the thread that answers requests.
 */
export function niceCommand(
  cmd: string,
  args: string[],
  nice: number = PLUGIN_THREAD_NICE,
): { cmd: string; args: string[] } {
  if (Deno.build.os === "windows") return { cmd, args };
  for (const path of ["/usr/bin/nice", "/bin/nice"]) {
    try {
      if (Deno.statSync(path).isFile) {
        return { cmd: path, args: ["-n", String(nice), cmd, ...args] };
      }
    } catch { /* not here, or not allowed to look */ }
  }
  return { cmd, args };
}
