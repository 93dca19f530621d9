/**
 * The Deno server's {@linkcode EventCodec}: big event bodies made into their
 * events, and big answers into their JSON bytes, on a worker of their own
 * (`service/event_body.ts`), one at a time, taking tenants in turn — a
 * tenant that sends many big bodies waits behind its own, not others'. A
 * body the worker fails on, or takes longer than {@linkcode CODEC_TIMEOUT_MS}
 * over, is `400 BODY_UNREADABLE` (for an agent's payload: its block where a
 * closed hook applies); an answer the worker fails on is written in place.
 * The worker is replaced after a failure.
 *
 * @module
 */
import { startWorker } from "../../host-deno/worker_start.ts";
import type { EventBodyMessage, EventBodySource, EventCodec } from "../../service/event_body.ts";
import { ApiError, outOfFiles } from "../../service/errors.ts";
import type { CodecAnswer, CodecJob } from "./_event_codec_worker.ts";
import { tokenizedClone } from "../../core/schema/lazy_json.ts";
import type { MatcherJob } from "../../core/dispatch/select.ts";

/** Bodies and answers of at least this many bytes (characters) go to the worker. */
export const CODEC_MIN_BYTES = 64 * 1024;
/** Longest one job may take on the worker, ms. */
export const CODEC_TIMEOUT_MS = 30_000;

const ENTRY = new URL("./_event_codec_worker.ts", import.meta.url);

interface Pending {
  job: CodecJob;
  transfer: Transferable[];
  resolve(answer: CodecAnswer): void;
}

/** An event codec on one worker; `close()` ends it. */
export interface DenoEventCodec extends EventCodec {
  /**
   * `matcherVerdicts(job)` on the worker, for `tenantId` (the engine's
   * `matchApart`); null when the worker failed.
   */
  match(tenantId: string, job: MatcherJob): Promise<boolean[] | null>;
  close(): void;
}

/**
 * Starts the codec and its worker (started now, not with the first big body:
 * loading the worker's modules would make that request wait).
 */
export function createEventCodec(
  options: {
    minBytes?: number;
    timeoutMs?: number;
    /** Where a failure of the worker is reported (one line each). @default console.error */
    log?: (entry: Record<string, unknown>) => void;
    /** Starts the worker (tests). @default host-deno's `startWorker` */
    startWorker?: (url: URL, options: WorkerOptions) => Worker;
  } = {},
): DenoEventCodec {
  const log = options.log ??
    ((entry: Record<string, unknown>) => console.error(JSON.stringify(entry)));
  const timeoutMs = options.timeoutMs ?? CODEC_TIMEOUT_MS;
  const queues = new Map<string, Pending[]>();
  let worker: Worker | null = null;
  let current: Pending | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;

  const settle = (answer: CodecAnswer) => {
    clearTimeout(timer);
    const done = current;
    current = null;
    // A worker that failed with no job (while starting) is replaced by the next job.
    done?.resolve(answer);
    pump();
  };
  const broke = (why: string) => {
    log({ at: new Date().toISOString(), level: "error", msg: "event codec", error: why });
    worker?.terminate();
    worker = null;
    settle({ failure: why });
  };
  const start = (): Worker => {
    const started = (options.startWorker ?? startWorker)(ENTRY, { type: "module" });
    started.onmessage = (event: MessageEvent<CodecAnswer>) => settle(event.data);
    started.onerror = (event) => {
      event.preventDefault();
      broke(`the codec worker failed (${event.message})`);
    };
    started.onmessageerror = () => broke("the codec worker sent a bad answer");
    return started;
  };
  // Tenants in turn: the first queued job of the tenant that waited longest.
  const next = (): Pending | null => {
    for (const [tenant, queue] of queues) {
      const pending = queue.shift()!;
      queues.delete(tenant);
      if (queue.length > 0) queues.set(tenant, queue); // to the back of the line
      return pending;
    }
    return null;
  };
  const pump = () => {
    if (current !== null || closed) return;
    current = next();
    if (current === null) return;
    if (worker === null) {
      try {
        worker = start();
      } catch (err) {
        // No thread to be had (the process out of file descriptors): every job waiting fails
        // now, and the next one tries again.
        const failure = `the codec worker could not start: ${(err as Error)?.message ?? err}`;
        log({ at: new Date().toISOString(), level: "error", msg: "event codec", error: failure });
        const left = [current, ...[...queues.values()].flat()];
        current = null;
        queues.clear();
        for (const pending of left) pending.resolve({ failure });
        return;
      }
    }
    timer = setTimeout(() => broke(`it took over ${timeoutMs} ms`), timeoutMs);
    worker.postMessage(current.job, current.transfer);
  };
  try {
    worker = start();
  } catch {
    worker = null; // the first job tries again, and fails for want of it if it must
  }
  const run = (tenantId: string, job: CodecJob, transfer: Transferable[]) =>
    new Promise<CodecAnswer>((resolve) => {
      if (closed) return resolve({ failure: "the server is shutting down" });
      const queue = queues.get(tenantId) ?? [];
      queue.push({ job, transfer, resolve });
      queues.set(tenantId, queue);
      pump();
    });

  return {
    minBytes: options.minBytes ?? CODEC_MIN_BYTES,
    async read(bytes: Uint8Array, source: EventBodySource): Promise<EventBodyMessage> {
      if (closed) throw new ApiError(503, "SHUTTING_DOWN", "the server is shutting down");
      // Its own buffer, moved to the worker rather than copied.
      const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
        ? bytes
        : bytes.slice();
      const answer = await run(source.tenantId, { read: own, source }, [own.buffer as ArrayBuffer]);
      if ("message" in answer) return answer.message;
      const why = "failure" in answer ? answer.failure : "no event came back";
      // Out of file descriptors is the server's state, not the body's: a 503 to retry.
      if (outOfFiles({ message: why })) throw new Error(why);
      throw new ApiError(400, "BODY_UNREADABLE", `the event body could not be read: ${why}`);
    },
    async write(tenantId: string, value: unknown): Promise<Uint8Array> {
      // Cloned now with its unread parts (a hook's big output) as tokens: posting the value
      // itself would read, and parse here, every one of them.
      const answer = closed ? null : await run(tenantId, { write: tokenizedClone(value) }, []);
      // Written here after all: an answer is never lost to the worker.
      return answer !== null && "bytes" in answer
        ? answer.bytes
        : new TextEncoder().encode(JSON.stringify(value));
    },
    async match(tenantId: string, job: MatcherJob): Promise<boolean[] | null> {
      const answer = await run(tenantId, { match: job }, []);
      return "verdicts" in answer ? answer.verdicts : null;
    },
    close() {
      closed = true;
      clearTimeout(timer);
      worker?.terminate();
      worker = null;
      const left = [...(current ? [current] : []), ...[...queues.values()].flat()];
      current = null;
      queues.clear();
      for (const pending of left) pending.resolve({ failure: "the server is shutting down" });
    },
  };
}
