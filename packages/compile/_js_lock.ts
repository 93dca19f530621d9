/**
 * A cross-process lock (Deno-only) for the engine build, so parallel test
 * processes on a clean machine do not run npm and clang over each other.
 * The lock is a directory (mkdir is atomic); a lock older than `staleMs` is
 * taken over (its holder died).
 *
 * @module
 */

const POLL_MS = 250;

/** Runs `fn` while holding the lock directory `path`. */
export async function withLock<T>(
  path: string,
  fn: () => Promise<T>,
  staleMs = 15 * 60_000,
): Promise<T> {
  for (;;) {
    try {
      await Deno.mkdir(path);
      break;
    } catch (err) {
      if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
      const age = await Deno.stat(path).then(
        (s) => Date.now() - (s.mtime?.getTime() ?? 0),
        () => 0,
      );
      if (age > staleMs) await Deno.remove(path, { recursive: true }).catch(() => {});
      else await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }
  try {
    return await fn();
  } finally {
    await Deno.remove(path, { recursive: true }).catch(() => {});
  }
}
