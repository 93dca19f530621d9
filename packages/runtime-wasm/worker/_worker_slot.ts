/**
 * One runtime worker seen from the main thread: starts it, runs one job at a
 * time with a kill timer, serves its HTTP asks, and terminates it when a job
 * overruns, the worker faults, or the runtime closes. A killed slot settles
 * its job with a failure and is never reused.
 *
 * @module
 */
import { runFailure } from "../../core/runtime/failure.ts";
import type { DispatchResult } from "../../core/dispatch/result.ts";
import type { RunFailure, RunResult, RuntimeStats } from "../../core/runtime/types.ts";
import { serveHttp } from "../http/_http_fetch.ts";
import { unpackBigTexts } from "../../core/schema/lazy_json.ts";
import type { WorkerJob, WorkerMessage, WorkerTypes } from "./_worker_protocol.ts";
import { typeBudgetBuffer } from "../../rewriter/mod.ts";
import { WARM_POOL_BYTES } from "../instance/_pool.ts";

/** A job handed to a slot, with what the main side needs to police it. */
export interface SlotJob {
  message: WorkerJob;
  /** Terminate the worker when no result came back after this long. */
  killAfterMs: number;
  /** For runs: the same, counted from when the worker reports the call started. */
  runMs?: number;
  /** What the job reports when that happens. */
  onOverrun: RunFailure;
  /** HOOK.md `allowed_hosts` of the job's hook (re-checked on this side). */
  allowedHosts: readonly string[];
  /** `chains` are a chain job's answers. */
  settle(result: RunResult, chains?: DispatchResult[]): void;
}

/** Events a slot reports to its pool. */
export interface SlotEvents {
  idle(slot: WorkerSlot): void;
  /** `starting` is true when the worker died before it was ready. */
  dead(slot: WorkerSlot, starting: boolean, failure: RunFailure): void;
}

/** How long a new worker may take to load the runtime. */
const START_TIMEOUT_MS = 30_000;
/** Hooks a worker remembers before the oldest is forgotten. */
const KNOWN_HOOKS = 256;

/** What a worker already has for a job's hook (see {@linkcode WorkerSlot.admit}). */
export interface Admission {
  /** The worker has never seen the hook: send its definition and bytes. */
  fresh: boolean;
  /** The worker has loaded the hook for these limits before. */
  loaded: boolean;
  /** Keys the worker may drop. */
  forget: number[];
}

/** One worker, one job at a time. */
export class WorkerSlot {
  state: "starting" | "idle" | "busy" | "dead" = "starting";

  /** Tenant of the call this worker runs, or null when it runs none. */
  get tenant(): string | null {
    return this.state === "busy" ? this.#job?.message.tenantId ?? null : null;
  }
  /** What the worker's runtime held at its last report (sent after jobs, at most once a second). */
  stats: RuntimeStats | null = null;
  /** Hook key → limits keys the worker has loaded it for (insertion order: oldest first). */
  readonly #known: Map<number, Set<string>> = new Map();
  readonly #worker: Worker;
  readonly #events: SlotEvents;
  readonly #stop = new AbortController();
  readonly #http = new Set<Promise<void>>();
  #job: SlotJob | null = null;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    url: URL,
    events: SlotEvents,
    warmBytes: number = WARM_POOL_BYTES,
    shareOf = 1,
    startWorker: (url: URL) => Worker = (url) => new Worker(url, { type: "module" }),
  ) {
    this.#events = events;
    this.#worker = startWorker(url);
    this.#worker.onmessage = (event: MessageEvent<WorkerMessage>) => this.#receive(event.data);
    this.#worker.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      this.kill(runFailure("WORKER_FAILED", event.message));
    };
    this.#worker.onmessageerror = () => this.kill(runFailure("WORKER_FAILED", "bad message"));
    // The types its plugins bring count on the process's one counter (rewriter `_type_budget.ts`).
    this.#worker.postMessage(
      { type: "types", buffer: typeBudgetBuffer(), warmBytes, shareOf } satisfies WorkerTypes,
    );
    this.#arm(START_TIMEOUT_MS, runFailure("WORKER_FAILED", "did not start"));
  }

  /** True when the worker has loaded hook `key` for `loads` (nothing recorded). */
  knows(key: number, loads: string): boolean {
    return this.#known.get(key)?.has(loads) ?? false;
  }

  /** Records that the next job carries hook `key` loaded for `loads`. */
  admit(key: number, loads: string): Admission {
    const forget: number[] = [];
    let seen = this.#known.get(key);
    const fresh = seen === undefined;
    if (seen === undefined) {
      this.#known.set(key, seen = new Set());
      for (const old of this.#known.keys()) {
        if (this.#known.size - forget.length <= KNOWN_HOOKS) break;
        forget.push(old);
      }
      for (const old of forget) this.#known.delete(old);
    }
    const loaded = seen.has(loads);
    seen.add(loads);
    return { fresh, loaded, forget };
  }

  /** Runs `job`; the slot must be idle. */
  start(job: SlotJob): void {
    this.state = "busy";
    this.#job = job;
    this.#arm(job.killAfterMs, job.onOverrun);
    this.#worker.postMessage(job.message);
  }

  /** Terminates the worker; its job (if any) settles with `failure`. */
  kill(failure: RunFailure): void {
    if (this.state === "dead") return;
    const starting = this.state === "starting";
    this.state = "dead";
    clearTimeout(this.#timer);
    this.#worker.terminate();
    this.#stop.abort();
    const job = this.#job;
    this.#job = null;
    job?.settle({ exitCode: null, stdout: "", stderr: "", failure });
    this.#events.dead(this, starting, failure);
  }

  /** Resolves when HTTP requests still being served have finished (after a kill: at once). */
  async drain(): Promise<void> {
    await Promise.all(this.#http);
  }

  #arm(ms: number, failure: RunFailure): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.kill(failure), ms);
  }

  #receive(message: WorkerMessage): void {
    if (this.state === "dead") return;
    if (message.type === "ready") {
      clearTimeout(this.#timer);
      this.state = "idle";
      this.#events.idle(this);
    } else if (message.type === "started") {
      const job = this.#job;
      if (job?.message.id === message.id && job.runMs !== undefined) {
        this.#arm(job.runMs, job.onOverrun);
      }
    } else if (message.type === "result") {
      const job = this.#job;
      if (job === null || job.message.id !== message.id) return;
      clearTimeout(this.#timer);
      this.#job = null;
      this.state = "idle";
      if (message.chains !== undefined && message.texts !== undefined) {
        unpackBigTexts(message.chains, message.texts);
      }
      job.settle(message.result, message.chains);
      this.#events.idle(this);
    } else if (message.type === "stats") {
      this.stats = message.stats;
    } else if (message.type === "http") {
      const served = serveHttp(message, this.#job?.allowedHosts ?? [], this.#stop.signal);
      this.#http.add(served);
      served.finally(() => this.#http.delete(served));
    }
  }
}
