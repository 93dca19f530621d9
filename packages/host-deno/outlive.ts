/**
 * A command that cannot outlive its time limit. A process hookbox starts is
 * stopped by hookbox's own timer; when hookbox is killed first (an agent
 * ending a hook call, Ctrl-C, a daemon killed) nobody would stop it, and a
 * build of a hook whose top level never ends, or a hook that loops, would keep
 * a core busy for good. On Linux the command runs under coreutils' `timeout`,
 * which kills it (and its process group) a little past the limit whatever
 * happens to hookbox, and passes on the SIGTERM hookbox sends it. A command
 * may also be given a limit of CPU time (`RLIMIT_CPU`, set by `/bin/sh`
 * before it runs the command): unlike a wall-clock limit it does not run out
 * sooner on a busy machine, so what fails at it fails the same way every time.
 *
 * @module
 */

/** coreutils' `timeout`. */
const TIMEOUT_BIN = "/usr/bin/timeout";
/** The shell that sets a command's CPU-time limit, then becomes the command. */
const SH_BIN = "/bin/sh";
/** Seconds the wrapper gives a command past its limit before it kills it itself. */
export const WRAPPER_GRACE_S = 2;
/**
 * Sets the soft CPU-time limit to `$1` s (the kernel then sends SIGXCPU) and
 * the hard one to `$2` s (SIGKILL, should the command catch SIGXCPU), with no
 * core file, and runs the rest of the arguments in its place.
 */
const CPU_LIMITED =
  'ulimit -c 0 && ulimit -S -t "$1" && ulimit -H -t "$2" || exit 125; shift 2; exec "$@"';

let available: boolean | undefined;

/** Whether commands can be wrapped here (Linux with coreutils' `timeout`). */
export function canBoundCommands(): boolean {
  if (available === undefined) {
    try {
      available = Deno.build.os === "linux" && Deno.statSync(TIMEOUT_BIN).isFile;
    } catch {
      available = false;
    }
  }
  return available;
}

/**
 * The program and arguments that run `cmd args...` so that it is killed
 * {@linkcode WRAPPER_GRACE_S} seconds after `timeoutMs` at the latest, and,
 * given `cpuMs`, ends with SIGXCPU once it has used that much CPU time (in
 * whole seconds, rounded up; all its threads count), or `[cmd, args]`
 * unchanged where commands cannot be wrapped.
 */
export function boundedCommand(
  cmd: string,
  args: string[],
  timeoutMs: number,
  cpuMs?: number,
): [string, string[]] {
  if (!canBoundCommands()) return [cmd, args];
  const seconds = Math.ceil(timeoutMs / 1000) + WRAPPER_GRACE_S;
  const timed = ["-s", "KILL", `${seconds}s`, cmd, ...args];
  if (cpuMs === undefined) return [TIMEOUT_BIN, timed];
  const cpu = Math.max(1, Math.ceil(cpuMs / 1000));
  return [SH_BIN, ["-c", CPU_LIMITED, "sh", String(cpu), String(cpu + 1), TIMEOUT_BIN, ...timed]];
}

/** Whether a command run by {@linkcode boundedCommand} ended at its CPU-time limit. */
export function endedAtCpuLimit(status: Deno.CommandStatus): boolean {
  // SIGXCPU, or `timeout` passing it on as 128 + 24.
  return status.signal === "SIGXCPU" || status.code === 128 + 24;
}
