/**
 * Workers kept between jobs, for the service's work off the request thread
 * (unpacking uploads, checking plugins). Starting a Deno worker holds the
 * thread that starts it about 10 ms, and in the service that is the thread
 * that answers every tenant's events: a worker per upload made each upload a
 * stall for everyone. A pool starts a worker when no idle one is left (a job
 * never waits for another's: how many run at once is for the callers' gates
 * to bound, the upload gate's build and unpack slots), keeps up to {@linkcode WorkerPoolOptions.size} idle ones, and
 * ends one whose job overran its deadline or failed (the next job starts a
 * new one) or that has been handed
 * {@linkcode WorkerPoolOptions.recycleBytes} of input, so the memory a big
 * job left behind goes with it. A worker idle for
 * {@linkcode WorkerPoolOptions.idleMs} ends too: an idle worker keeps its
 * process running.
 *
 * @module
 */
import { startWorker } from "../../host-deno/worker_start.ts";
import { outOfFiles } from "../../service/errors.ts";

/** Options of {@linkcode WorkerPool}. */
export interface WorkerPoolOptions {
  /** Most idle workers kept for the next jobs. */
  size: number;
  /** Input bytes after which a worker is ended once its job is done. */
  recycleBytes: number;
  /** How long a worker waits idle before it ends, ms. */
  idleMs: number;
}

interface Member {
  worker: Worker;
  /** Input bytes handed to it so far. */
  bytes: number;
  /** Ends it once it has been idle too long. */
  idle?: ReturnType<typeof setTimeout> | undefined;
}

/** What a job's answer failed with: the deadline, or the worker itself. */
export type PoolFailure = { kind: "timeout" } | { kind: "error"; message: string };

/** A job's answer, or why there is none. */
export type PoolResult<A> = { ok: true; answer: A } | { ok: false; failure: PoolFailure };

/** Workers running `entry`, one job at a time each, kept between jobs (see the module doc). */
export class WorkerPool<J, A> {
  readonly #entry: URL | string;
  readonly #options: WorkerPoolOptions;
  #idle: Member[] = [];
  /** Workers started so far. */
  started = 0;

  constructor(entry: URL | string, options: WorkerPoolOptions) {
    this.#entry = entry;
    this.#options = options;
  }

  /** Runs `job` (`bytes` of input, moving `transfer`) on a worker, answered within `timeoutMs`. */
  async run(
    job: J,
    bytes: number,
    timeoutMs: number,
    transfer: Transferable[] = [],
  ): Promise<PoolResult<A>> {
    const member = this.#idle.pop() ?? this.#start();
    clearTimeout(member.idle);
    member.bytes += bytes;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let result: PoolResult<A>;
    try {
      result = await new Promise<PoolResult<A>>((resolve) => {
        timer = setTimeout(() => resolve({ ok: false, failure: { kind: "timeout" } }), timeoutMs);
        member.worker.onmessage = (event: MessageEvent<A>) =>
          resolve({ ok: true, answer: event.data });
        member.worker.onerror = (event) => {
          event.preventDefault();
          resolve({ ok: false, failure: { kind: "error", message: event.message } });
        };
        member.worker.onmessageerror = () =>
          resolve({ ok: false, failure: { kind: "error", message: "a bad answer" } });
        member.worker.postMessage(job, transfer);
      });
    } finally {
      clearTimeout(timer);
    }
    member.worker.onmessage = member.worker.onerror = member.worker.onmessageerror = null;
    const keep = result.ok && member.bytes < this.#options.recycleBytes &&
      this.#idle.length < this.#options.size;
    if (!keep) member.worker.terminate();
    else {
      this.#idle.push(member);
      member.idle = setTimeout(() => {
        const at = this.#idle.indexOf(member);
        if (at >= 0) this.#idle.splice(at, 1);
        member.worker.terminate();
      }, this.#options.idleMs);
    }
    // A worker that could not load its modules for want of file descriptors failed for the
    // server's state, not the job's: thrown, so the service answers 503 OUT_OF_FILES.
    if (
      !result.ok && result.failure.kind === "error" && outOfFiles(result.failure)
    ) {
      throw new Error(result.failure.message);
    }
    return result;
  }

  /** Ends every idle worker (a busy one ends with its job). */
  close(): void {
    for (const member of this.#idle.splice(0)) {
      clearTimeout(member.idle);
      member.worker.terminate();
    }
  }

  #start(): Member {
    const worker = startWorker(this.#entry, { type: "module" });
    this.started++;
    return { worker, bytes: 0 };
  }
}
