/**
 * A command that cannot outlive its time limit. A process hookbox starts is
 * stopped by hookbox's own timer; when hookbox is killed first (an agent
 * ending a hook call, Ctrl-C, a daemon killed) nobody would stop it, and a
 * build of a hook whose top level never ends, or a hook that loops, would keep
 * a core busy for good. On Linux the command runs under coreutils' `timeout`,
 * which kills it (and its process group) a little past the limit whatever
 * happens to hookbox, and passes on the SIGTERM hookbox sends it.
 *
 * @module
 */

/** coreutils' `timeout`. */
const TIMEOUT_BIN = "/usr/bin/timeout";
/** Seconds the wrapper gives a command past its limit before it kills it itself. */
export const WRAPPER_GRACE_S = 2;

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
 * {@linkcode WRAPPER_GRACE_S} seconds after `timeoutMs` at the latest, or
 * `[cmd, args]` unchanged where commands cannot be wrapped.
 */
export function boundedCommand(cmd: string, args: string[], timeoutMs: number): [string, string[]] {
  if (!canBoundCommands()) return [cmd, args];
  const seconds = Math.ceil(timeoutMs / 1000) + WRAPPER_GRACE_S;
  return [TIMEOUT_BIN, ["-s", "KILL", `${seconds}s`, cmd, ...args]];
}
