/**
 * Lowers the scheduling priority of the calling thread (Linux only). The
 * service's plugin workers call it at start: on a machine with few cores the
 * thread that answers requests — the service's one serial path — then keeps
 * its core when a worker wakes, instead of waiting behind tenant code.
 * Measured with `scripts/load.ts`: about 9% more dispatches per second on
 * two cores. Elsewhere, or without the permissions to read
 * `/proc/thread-self` and set priorities, it does nothing.
 *
 * @module
 */
import { getPriority, setPriority } from "node:os";

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

/** Sets the calling thread's nice value; false when it could not. */
export function setThreadNice(nice: number): boolean {
  if (Deno.build.os !== "linux") return false;
  const granted = (descriptor: Deno.PermissionDescriptor) =>
    Deno.permissions.querySync(descriptor).state === "granted";
  if (
    !granted({ name: "read", path: "/proc/thread-self" }) ||
    !granted({ name: "sys", kind: "setPriority" })
  ) return false;
  try {
    // "/proc/thread-self" links to "PID/task/TID"; on Linux a thread id names
    // one thread to setpriority(2).
    const tid = Number(Deno.readLinkSync("/proc/thread-self").split("/").pop());
    if (!Number.isSafeInteger(tid) || tid <= 0) return false;
    setPriority(tid, nice);
    return getPriority(tid) === nice;
  } catch {
    // Raising a priority back needs CAP_SYS_NICE or a high enough RLIMIT_NICE.
    return false;
  }
}

/** Sets the calling thread's nice value (the plugin workers' by default); false when it could not. */
export function lowerThreadPriority(nice: number = PLUGIN_THREAD_NICE): Promise<boolean> {
  return Promise.resolve(setThreadNice(nice));
}

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
