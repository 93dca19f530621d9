/**
 * Writes that never hold the thread that makes them: bytes queue in order
 * and go out by asynchronous writes ({@linkcode queuedWrites}). The server's
 * request log, its `--decision-log` file and the `--processes` supervisor's
 * lines use it, so that a slow reader (a log shipper behind, a pipe nobody
 * reads, a slow disk) never stops the thread that answers requests.
 *
 * @module
 */

/** Most bytes waiting to be written; past it, what comes is dropped (and reported). */
export const LOG_QUEUE_BYTES = 8 * 1024 * 1024;
/** Longest `drained` waits for what is still queued, ms. */
export const LOG_DRAIN_MS = 2000;

/**
 * Bytes written by asynchronous writes, in order, from a queue of at most
 * {@linkcode LOG_QUEUE_BYTES}: a slow reader (a log shipper behind, a pipe
 * nobody reads, a slow disk) never holds the thread that answers requests,
 * as a synchronous write to a full pipe did. Past the queue's size a batch
 * is dropped: `dropped` hears of its lines, with why. Once a write fails, the
 * queue is dropped and `enqueue` throws from then on.
 */
export function queuedWrites(
  write: (bytes: Uint8Array) => Promise<number>,
  dropped: (lines: number, why: Error) => void,
) {
  const queue: { bytes: Uint8Array; lines: number }[] = [];
  let queued = 0;
  let writing: Promise<void> | null = null;
  let broken: Error | null = null;
  const run = async () => {
    try {
      while (queue.length > 0) {
        const { bytes } = queue[0]!;
        for (let at = 0; at < bytes.length;) at += await write(bytes.subarray(at));
        queue.shift();
        queued -= bytes.length;
      }
    } catch (err) {
      broken = err instanceof Error ? err : new Error(String(err));
      dropped(queue.reduce((n, q) => n + q.lines, 0), broken);
      queue.length = 0;
      queued = 0;
    } finally {
      writing = null;
    }
  };
  return {
    /**
     * Queues `bytes` (holding `lines` lines); false when they were dropped
     * instead (the queue is full). Throws once a write has failed.
     */
    enqueue(bytes: Uint8Array, lines: number): boolean {
      if (broken !== null) throw broken;
      if (queued + bytes.length > LOG_QUEUE_BYTES) {
        dropped(lines, new Error(`${LOG_QUEUE_BYTES} bytes wait to be written`));
        return false;
      }
      queue.push({ bytes, lines });
      queued += bytes.length;
      writing ??= run();
      return true;
    },
    /** Resolves once every queued byte is written, or after {@linkcode LOG_DRAIN_MS}. */
    async drained(): Promise<void> {
      const until = Date.now() + LOG_DRAIN_MS;
      while (writing !== null && Date.now() < until) {
        await settlesWithin(writing, until - Date.now());
      }
    },
    /** Whether a write has failed. */
    get broken(): boolean {
      return broken !== null;
    },
  };
}

/** True when `work` settles within `ms`, false when the time runs out first. */
export async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<boolean>((resolve) => timer = setTimeout(() => resolve(false), ms));
  try {
    return await Promise.race([work.then(() => true, () => true), late]);
  } finally {
    clearTimeout(timer);
  }
}
