/**
 * A cross-process lock (Deno-only) for the engine build, so parallel test
 * processes on a clean machine do not run npm and clang over each other.
 * The lock is a directory (mkdir is atomic) holding its holder's name (process
 * id and start time, machine); the holder touches it every
 * {@linkcode BEAT_MS}. A lock is taken over when its holder is gone: a
 * process on this machine that no longer runs (an agent's hook call that
 * exited or was killed while it built), or another holder that has not
 * touched it for `staleMs`.
 *
 * @module
 */

const POLL_MS = 250;
/** How often the holder touches its lock, ms. */
const BEAT_MS = 5_000;
/** A lock whose holder cannot be looked up, untouched this long, is a dead holder's, ms. */
const STALE_MS = 60_000;
/** The holder's name, in the lock directory. */
const OWNER = "owner";

/** Runs `fn` while holding the lock directory `path`. */
export async function withLock<T>(
  path: string,
  fn: () => Promise<T>,
  staleMs = STALE_MS,
): Promise<T> {
  for (;;) {
    try {
      await Deno.mkdir(path);
      break;
    } catch (err) {
      if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
      if (await lockAbandoned(path, staleMs)) {
        await Deno.remove(path, { recursive: true }).catch(() => {});
      } else await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }
  await Deno.writeTextFile(`${path}/${OWNER}`, holderName()).catch(() => {});
  const beat = setInterval(() => {
    const now = new Date();
    Deno.utime(path, now, now).catch(() => {});
  }, BEAT_MS);
  Deno.unrefTimer(beat);
  try {
    return await fn();
  } finally {
    clearInterval(beat);
    await Deno.remove(path, { recursive: true }).catch(() => {});
  }
}

/**
 * Whether the lock at `path` is left by a holder that is gone. A holder on
 * this machine is looked up: gone when its id and start time no longer name a
 * running process, kept however long it builds while they do. Any other (on
 * another machine sharing the folder, not named yet, or where processes
 * cannot be looked up) is gone once it has not touched the lock for `staleMs`.
 */
export async function lockAbandoned(path: string, staleMs = STALE_MS): Promise<boolean> {
  const info = await Deno.stat(path).catch(() => null);
  if (info === null) return false; // gone already: the next mkdir says
  const owner = await Deno.readTextFile(`${path}/${OWNER}`).catch(() => null);
  return holderGone(owner) ?? Date.now() - (info.mtime?.getTime() ?? 0) > staleMs;
}

/**
 * Whether the process a {@linkcode processName} names has ended: true or
 * false for a process of this machine, undefined for a name that is not one
 * (another machine's, none, or no `/proc` to look it up in). Lines after the
 * name's three are the caller's own.
 */
export function holderGone(name: string | null): boolean | undefined {
  const [pid, started, host] = name?.split("\n") ?? [];
  if (host === undefined || host !== hostName()) return undefined;
  const running = startTime(Number(pid));
  return running === undefined ? undefined : running !== started;
}

/** `PID\nSTART\nHOST`: process `pid`, as {@linkcode holderGone} looks it up. */
export function processName(pid: number): string {
  return `${pid}\n${startTime(pid) ?? ""}\n${hostName()}`;
}

function holderName(): string {
  return processName(Deno.pid);
}

/**
 * The start time of process `pid` (`/proc/PID/stat`, clock ticks since boot;
 * with the id, it names one process even after the id is reused), "" when no
 * such process runs (or it has exited and waits to be reaped), or undefined
 * where that cannot be known (no `/proc`).
 */
function startTime(pid: number): string | undefined {
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined;
  let stat: string;
  try {
    stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) return undefined;
    try {
      Deno.statSync("/proc/self/stat");
      return "";
    } catch {
      return undefined;
    }
  }
  // The fields after the command name in parentheses (which may hold spaces): the 3rd is the
  // state (Z: exited, not yet reaped), the 22nd the start time.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return fields[0] === "Z" ? "" : fields[19];
}

function hostName(): string {
  try {
    return Deno.hostname();
  } catch {
    return "";
  }
}
