/**
 * Worker mode (defence in depth): the same {@linkcode WasmRuntime} runs
 * inside Web Workers, and the main thread terminates a worker whose call
 * overruns its deadline by more than a grace period — so neither a metering
 * bug nor a hung host function can wedge the host. The main thread keeps
 * `loadBytes`; a worker gets each plugin's bytes once. Calls wait in a queue
 * for a free worker; a killed worker's call reports `timeout` / `time` and a
 * fresh worker is started for the next one.
 *
 * @module
 */
import { runFailure } from "../failure.ts";
import type { HookDefinition } from "../../hook/types.ts";
import type { EffectiveLimits, RunFailure, RunRequest, RunResult, Runtime } from "../types.ts";
import { failed, loadFailure } from "./_failures.ts";
import { type SlotJob, WorkerSlot } from "./_worker_slot.ts";
import type { WorkerJob } from "./_worker_protocol.ts";

/** Options of {@linkcode WorkerRuntime}. */
export interface WorkerRuntimeOptions {
  loadBytes(hook: HookDefinition): Promise<Uint8Array>;
  /** Workers per runtime. @default 1 */
  workers?: number;
  /** Added to a call's timeout before its worker is terminated. @default 100 */
  graceMs?: number;
  /** Worker entry module (tests substitute their own). @default ./_worker_entry.ts */
  entry?: URL;
  /** Called when a call has been handed to a worker (tests). */
  onDispatch?: (type: WorkerJob["type"]) => void;
}

/** Time a worker may take to load a plugin it has not loaded yet. */
const LOAD_ALLOWANCE_MS = 30_000;
const TIMEOUT: RunFailure = runFailure("TIMEOUT");
const ABORTED: RunFailure = runFailure("ABORTED");

/** How long a tenant counts as active after its last call, ms. */
const ACTIVE_MS = 1000;

/** A call waiting for (or running on) a worker. */
interface Pending {
  job: Omit<WorkerJob, "id" | "forget" | "hook" | "bytes" | "announce">;
  hook: HookDefinition;
  bytes: Uint8Array;
  onOverrun: RunFailure;
  settle(result: RunResult): void;
  /** The worker running it, once started. */
  slot: WorkerSlot | null;
}

/** Implements {@linkcode Runtime} on a small pool of runtime workers. */
export class WorkerRuntime implements Runtime {
  readonly kind = "wasm" as const;
  readonly #options: WorkerRuntimeOptions;
  readonly #size: number;
  readonly #grace: number;
  readonly #entry: URL;
  #slots: WorkerSlot[] = [];
  #queue: Pending[] = [];
  /** When each tenant last submitted a call (see `#tenantCap`). */
  #active = new Map<string, number>();
  #keys = new WeakMap<HookDefinition, number>();
  #bytes = new WeakMap<HookDefinition, Promise<Uint8Array>>();
  /** Limits keys a worker prepared each hook for: later prepares answer at once. */
  #prepared = new WeakMap<HookDefinition, Set<string>>();
  #nextKey = 1;
  /** Bumped by close(): calls that started before it end as aborted. */
  #generation = 0;
  #nextId = 1;
  /** Workers started so far (each kill leads to a new one). */
  workersStarted = 0;

  constructor(options: WorkerRuntimeOptions) {
    this.#options = options;
    this.#size = options.workers ?? 1;
    this.#grace = options.graceMs ?? 100;
    this.#entry = options.entry ?? new URL("./_worker_entry.ts", import.meta.url);
  }

  /** Runs one call on a worker; plugin misbehaviour comes back as `failure`. */
  async run(request: RunRequest): Promise<RunResult> {
    const { hook, limits, input, env, tenantId, signal } = request;
    const allowedHosts = request.allowedHosts ?? [];
    if (input.byteLength > limits.inputKb * 1024) return failed("LIMIT_INPUT");
    const generation = this.#generation;
    let bytes: Uint8Array;
    try {
      bytes = await this.#load(hook);
    } catch (err) {
      return loadFailure(err);
    }
    if (generation !== this.#generation) return failed("ABORTED");
    const key = this.#key(hook);
    const job = { type: "run" as const, key, limits, input, env, tenantId, allowedHosts };
    return await this.#submit(job, hook, bytes, TIMEOUT, signal);
  }

  /** Loads the plugin on the main side and has a worker instrument and compile it. */
  async prepare(hook: HookDefinition, limits: EffectiveLimits): Promise<RunFailure | null> {
    const loads = `${limits.memoryMb}:${limits.moduleKb}`;
    if (this.#prepared.get(hook)?.has(loads)) return null;
    const generation = this.#generation;
    let bytes: Uint8Array;
    try {
      bytes = await this.#load(hook);
    } catch (err) {
      return loadFailure(err).failure ?? null;
    }
    if (generation !== this.#generation) return { ...ABORTED };
    const job = {
      type: "prepare" as const,
      key: this.#key(hook),
      limits,
      input: new Uint8Array(0),
      env: {},
      tenantId: "",
    };
    const overrun = runFailure("WORKER_FAILED", "prepare took too long");
    const result = await this.#submit(job, hook, bytes, overrun, undefined);
    if (result.failure !== undefined) return result.failure;
    let prepared = this.#prepared.get(hook);
    if (prepared === undefined) this.#prepared.set(hook, prepared = new Set());
    prepared.add(loads);
    return null;
  }

  /** Terminates every worker; queued and running calls report `error` / `aborted`. */
  async close(): Promise<void> {
    this.#generation++;
    const queued = this.#queue;
    this.#queue = [];
    for (const pending of queued) pending.settle(failed("ABORTED"));
    const slots = this.#slots;
    for (const slot of slots) slot.kill(ABORTED);
    this.#slots = [];
    await Promise.all(slots.map((slot) => slot.drain()));
    this.#keys = new WeakMap();
    this.#bytes = new WeakMap();
    this.#prepared = new WeakMap();
  }

  #submit(
    job: Pending["job"],
    hook: HookDefinition,
    bytes: Uint8Array,
    onOverrun: RunFailure,
    signal: AbortSignal | undefined,
  ): Promise<RunResult> {
    if (signal?.aborted) return Promise.resolve(failed("ABORTED"));
    return new Promise((resolve) => {
      const onAbort = () => {
        const at = this.#queue.indexOf(pending);
        if (at >= 0) this.#queue.splice(at, 1);
        pending.slot?.kill(ABORTED);
        pending.settle(failed("ABORTED"));
      };
      let settled = false;
      const pending: Pending = {
        job,
        hook,
        bytes,
        onOverrun,
        slot: null,
        settle: (result) => {
          if (settled) return;
          settled = true;
          signal?.removeEventListener("abort", onAbort);
          resolve(result);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      if (job.tenantId !== "") this.#active.set(job.tenantId, Date.now());
      this.#queue.push(pending);
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#queue.length > 0) {
      const slot = this.#slots.find((s) => s.state === "idle");
      if (slot === undefined) {
        if (this.#slots.length < this.#size) this.#spawn();
        return;
      }
      const pending = this.#next();
      if (pending === null) return;
      pending.slot = slot;
      slot.start(this.#message(slot, pending));
      this.#options.onDispatch?.(pending.job.type);
    }
  }

  /**
   * The next call to start: the oldest one of the tenant with the fewest calls
   * running, so a tenant whose hooks run at their limits holds at most its
   * share of the workers while others wait. While two or more tenants are
   * active, no tenant may hold every worker: one stays free for the others
   * (null: every waiting call belongs to a tenant at that cap).
   */
  #next(): Pending | null {
    const running = new Map<string, number>();
    for (const slot of this.#slots) {
      const tenant = slot.tenant;
      if (tenant !== null) running.set(tenant, (running.get(tenant) ?? 0) + 1);
    }
    const cap = this.#tenantCap();
    let best = -1;
    let bestRunning = Infinity;
    for (let i = 0; i < this.#queue.length; i++) {
      const tenant = this.#queue[i]!.job.tenantId;
      const n = running.get(tenant) ?? 0;
      if (tenant !== "" && n >= cap) continue;
      if (n < bestRunning) {
        best = i;
        bestRunning = n;
        if (n === 0) break;
      }
    }
    return best < 0 ? null : this.#queue.splice(best, 1)[0]!;
  }

  /** Workers one tenant may hold: all but one while other tenants are active. */
  #tenantCap(): number {
    if (this.#size < 2) return this.#size;
    const now = Date.now();
    let active = 0;
    for (const [tenant, at] of this.#active) {
      if (now - at > ACTIVE_MS) this.#active.delete(tenant);
      else active++;
    }
    return active >= 2 ? this.#size - 1 : this.#size;
  }

  #message(slot: WorkerSlot, pending: Pending): SlotJob {
    const { job, hook, bytes, onOverrun, settle } = pending;
    const seen = slot.admit(job.key, `${job.limits.memoryMb}:${job.limits.moduleKb}`);
    const message: WorkerJob = {
      ...job,
      id: this.#nextId++,
      forget: seen.forget,
      announce: !seen.loaded,
    };
    if (seen.fresh) Object.assign(message, { hook, bytes });
    const allowedHosts = job.allowedHosts ?? [];
    if (job.type === "prepare") {
      return { message, killAfterMs: LOAD_ALLOWANCE_MS, onOverrun, allowedHosts, settle };
    }
    // Loading happens before the call's clock starts (the worker says when).
    const runMs = job.limits.timeoutMs + this.#grace;
    const killAfterMs = seen.loaded ? runMs : LOAD_ALLOWANCE_MS + runMs;
    return { message, killAfterMs, runMs, onOverrun, allowedHosts, settle };
  }

  #spawn(): void {
    this.workersStarted++;
    const slot = new WorkerSlot(this.#entry, {
      idle: () => this.#pump(),
      dead: (dead, starting, failure) => {
        this.#slots = this.#slots.filter((s) => s !== dead);
        if (!starting) return this.#pump();
        // A worker that cannot start: fail what waits instead of retrying forever.
        const queued = this.#queue;
        this.#queue = [];
        for (const pending of queued) {
          pending.settle(failed(failure.code, failure.message ?? undefined));
        }
      },
    });
    this.#slots.push(slot);
  }

  #key(hook: HookDefinition): number {
    let key = this.#keys.get(hook);
    if (key === undefined) this.#keys.set(hook, key = this.#nextKey++);
    return key;
  }

  #load(hook: HookDefinition): Promise<Uint8Array> {
    let bytes = this.#bytes.get(hook);
    if (bytes === undefined) {
      bytes = this.#options.loadBytes(hook);
      this.#bytes.set(hook, bytes);
      bytes.catch(() => this.#bytes.delete(hook));
    }
    return bytes;
  }
}
