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
import { PLUGIN_THREAD_NICE } from "./nice.ts";

export { LONG_CALL_MS, LONG_CALL_NICE, niceCommand, PLUGIN_THREAD_NICE } from "./nice.ts";

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
