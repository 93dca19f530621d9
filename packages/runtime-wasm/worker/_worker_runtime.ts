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
import { runFailure } from "../../core/runtime/failure.ts";
import type { HookDefinition } from "../../core/hook/types.ts";
import type { DispatchResult } from "../../core/dispatch/result.ts";
import { effectiveLimits, type Policy } from "../../core/policy.ts";
import type { HookEvent } from "../../core/schema/event.ts";
import { type EventText, textOf } from "../../core/schema/event_text.ts";
import { holdsLazy, stringifyLazy } from "../../core/schema/lazy_json.ts";
import type {
  ChainAnswer,
  ChainRequest,
  EffectiveLimits,
  RunFailure,
  RunRequest,
  RunResult,
  Runtime,
  RuntimeStats,
} from "../../core/runtime/types.ts";
import { failed, loadFailure } from "../_failures.ts";
import { type SlotJob, WorkerSlot } from "./_worker_slot.ts";
import type { ChainLink, ChainSpec, WorkerJob } from "./_worker_protocol.ts";
import { WARM_POOL_BYTES } from "../instance/_pool.ts";

/** Options of {@linkcode WorkerRuntime}. */
export interface WorkerRuntimeOptions {
  loadBytes(hook: HookDefinition): Promise<Uint8Array>;
  /** Workers per runtime. @default 1 */
  workers?: number;
  /** Added to a call's timeout before its worker is terminated. @default 100 */
  graceMs?: number;
  /** Worker entry module (tests substitute their own). @default ./_worker_entry.ts */
  entry?: URL;
  /** Time a worker may take to load plugins it has not loaded yet, ms. @default 30000 */
  loadAllowanceMs?: number;
  /** Called when a call has been handed to a worker, with its tenant (tests). */
  onDispatch?: (type: WorkerJob["type"], tenantId: string) => void;
  /** Start every worker now rather than when calls first need them. @default false */
  start?: boolean;
  /**
   * Bytes idle warm instances may hold in all the workers together: each gets
   * its share, so more workers never hold more (nor more engine memories).
   * @default WARM_POOL_BYTES
   */
  warmBytes?: number;
  /** Starts a worker thread (`WasmRuntimeOptions.startWorker`). @default `new Worker` */
  startWorker?: (url: URL) => Worker;
}

/** Default time a worker may take to load a plugin it has not loaded yet. */
const LOAD_ALLOWANCE_MS = 30_000;
const TIMEOUT: RunFailure = runFailure("TIMEOUT");
const ABORTED: RunFailure = runFailure("ABORTED");

/** How long a tenant counts as active after its last call, ms. */
const ACTIVE_MS = 1000;
/** Most chains (of one tenant) sent to a worker in one message. */
const CHAIN_BATCH = 16;
/** Per hook of a chain: added to its timeout for the longest a chain waits for a worker. */
const CHAIN_GRACE_MS = 1000;

/** One hook of a chain job, main side. */
/** The bytes a chain job names when its first hook is a prompt hook (unused for chains). */
const NO_BYTES = new Uint8Array(0);

interface Link {
  key: number;
  hook: HookDefinition;
  /** The plugin (WebAssembly hooks; a prompt hook has none). */
  bytes: Uint8Array | undefined;
  limits: EffectiveLimits;
}

/** What a job settles with: a call's result, and a chain job's answer. */
interface Settled {
  result: RunResult;
  chain?: DispatchResult | undefined;
}

/** A call waiting for (or running on) a worker. */
interface Pending {
  job: Omit<WorkerJob, "id" | "forget" | "hook" | "bytes" | "announce" | "chains">;
  hook: HookDefinition;
  bytes: Uint8Array;
  /** Chain jobs: every hook (the first is `hook`), the event, policy and env. */
  chain?: { links: Link[]; event: HookEvent; policy: Policy; env: Record<string, string> };
  /**
   * Latest time (`performance.now()`) a worker may take the job; past it,
   * the job settles as a timeout without running.
   */
  deadline?: number;
  onOverrun: RunFailure;
  settle(result: RunResult, chain?: DispatchResult): void;
  /** The worker running it, once started. */
  slot: WorkerSlot | null;
  /** The one worker that may take it (a prepare for every worker), if any. */
  pin?: WorkerSlot;
}

/** Implements {@linkcode Runtime} on a small pool of runtime workers. */
export class WorkerRuntime implements Runtime {
  readonly kind = "wasm" as const;
  readonly #options: WorkerRuntimeOptions;
  readonly #size: number;
  readonly #grace: number;
  readonly #entry: URL;
  readonly #loadAllowance: number;
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
  #expiry: ReturnType<typeof setTimeout> | undefined;
  #expiryAt = Infinity;
  /** Workers started so far (each kill leads to a new one). */
  workersStarted = 0;

  constructor(options: WorkerRuntimeOptions) {
    this.#options = options;
    this.#size = options.workers ?? 1;
    this.#grace = options.graceMs ?? 100;
    this.#entry = options.entry ?? new URL("./_worker_entry.ts", import.meta.url);
    this.#loadAllowance = options.loadAllowanceMs ?? LOAD_ALLOWANCE_MS;
    if (options.start) { while (this.#slots.length < this.#size) this.#spawn(); }
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
    return (await this.#submit(job, hook, bytes, TIMEOUT, signal)).result;
  }

  /**
   * Runs a synchronous chain on one worker: one message per event. Null when
   * a plugin cannot be read here (the dispatcher then calls hook by hook, and
   * each call reports its own load failure).
   */
  async runChain(request: ChainRequest): Promise<ChainAnswer> {
    const { hooks, event, policy, tenantId, env, signal } = request;
    const generation = this.#generation;
    let links: Link[];
    try {
      links = await Promise.all(hooks.map(async (hook) => ({
        key: this.#key(hook),
        hook,
        bytes: hook.entry.runtime === "prompt" ? undefined : await this.#load(hook),
        limits: effectiveLimits(hook.manifest, policy),
      })));
    } catch {
      return null;
    }
    if (generation !== this.#generation) return { failure: { ...ABORTED } };
    const first = links[0]!;
    const job = {
      type: "chain" as const,
      key: first.key,
      limits: first.limits,
      input: new Uint8Array(0),
      env: {},
      tenantId,
    };
    // A chain waits for a worker at most as long as its hooks may run; once
    // started, the worker's kill timer polices it.
    const budget = links.reduce(
      (ms, link) => link.bytes === undefined ? ms : ms + link.limits.timeoutMs + CHAIN_GRACE_MS,
      0,
    );
    const settled = await this.#submit(job, first.hook, first.bytes ?? NO_BYTES, TIMEOUT, signal, {
      chain: { links, event, policy, env },
      deadline: performance.now() + budget,
    });
    if (settled.chain !== undefined) return { result: settled.chain };
    return { failure: settled.result.failure ?? runFailure("WORKER_FAILED", "no answer") };
  }

  /** Loads the plugin on the main side and has a worker instrument and compile it. */
  async prepare(hook: HookDefinition, limits: EffectiveLimits): Promise<RunFailure | null> {
    const loads = `${limits.memoryMb}:${limits.moduleKb}`;
    if (this.#prepared.get(hook)?.has(loads)) return null;
    return await this.#prepareOnce(hook, limits, loads);
  }

  /**
   * {@linkcode prepare} on every worker, ahead of the hook's first events
   * (after an upload): a job for each worker that lacks it, taken by that
   * worker alone when it is next idle.
   */
  async prepareAll(hook: HookDefinition, limits: EffectiveLimits): Promise<RunFailure | null> {
    const loads = `${limits.memoryMb}:${limits.moduleKb}`;
    // One job for each worker that lacks it, for that worker alone; workers that have it
    // loaded need none (a tenant's other hooks, after an upload), and a worker not started
    // yet gets it with its first event.
    const key = this.#key(hook);
    const lacking = this.#slots.filter((slot) => slot.state !== "dead" && !slot.knows(key, loads));
    const failures = await Promise.all(
      lacking.map((slot) => this.#prepareOnce(hook, limits, loads, slot)),
    );
    return failures.find((f) => f !== null) ?? null;
  }

  async #prepareOnce(
    hook: HookDefinition,
    limits: EffectiveLimits,
    loads: string,
    pin?: WorkerSlot,
  ): Promise<RunFailure | null> {
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
    const { result } = await this.#submit(job, hook, bytes, overrun, undefined, pin ? { pin } : {});
    if (result.failure !== undefined) return result.failure;
    let prepared = this.#prepared.get(hook);
    if (prepared === undefined) this.#prepared.set(hook, prepared = new Set());
    prepared.add(loads);
    return null;
  }

  /**
   * What the workers' runtimes hold, summed over the live workers as each last
   * reported (after its jobs, within a second of the last), with `running`
   * the calls and chains on a worker now and `queued` those waiting for one.
   */
  stats(): RuntimeStats {
    const sum: Required<RuntimeStats> = {
      warmInstances: 0,
      warmIdleBytes: 0,
      running: 0,
      queued: this.#queue.length,
      workers: this.#slots.length,
      keptPlugins: 0,
      keptPluginBytes: 0,
      loadedPluginBytes: 0,
      pooledMemoryBytes: 0,
    };
    for (const slot of this.#slots) {
      if (slot.state === "busy") sum.running++;
      const s = slot.stats;
      if (s === null) continue;
      sum.warmInstances += s.warmInstances;
      sum.warmIdleBytes += s.warmIdleBytes;
      sum.keptPlugins += s.keptPlugins ?? 0;
      sum.keptPluginBytes += s.keptPluginBytes ?? 0;
      sum.loadedPluginBytes += s.loadedPluginBytes ?? 0;
      sum.pooledMemoryBytes += s.pooledMemoryBytes ?? 0;
    }
    return sum;
  }

  /** Terminates every worker; queued and running calls report `error` / `aborted`. */
  async close(): Promise<void> {
    this.#generation++;
    this.#disarmExpiry();
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
    extra: Pick<Pending, "chain" | "deadline" | "pin"> = {},
  ): Promise<Settled> {
    if (signal?.aborted) return Promise.resolve({ result: failed("ABORTED") });
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
        ...extra,
        onOverrun,
        slot: null,
        settle: (result, answer) => {
          if (settled) return;
          settled = true;
          signal?.removeEventListener("abort", onAbort);
          resolve({ result, chain: answer });
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      if (job.tenantId !== "") this.#active.set(job.tenantId, Date.now());
      this.#queue.push(pending);
      this.#pump();
      if (pending.slot === null && pending.deadline !== undefined) {
        this.#armExpiry(pending.deadline);
      }
    });
  }

  #pump(): void {
    this.#startQueued();
    // Nothing left to expire: the timer must not keep the process alive.
    if (this.#expiry !== undefined && !this.#queue.some((p) => p.deadline !== undefined)) {
      this.#disarmExpiry();
    }
  }

  #startQueued(): void {
    while (this.#queue.length > 0) {
      let slot: WorkerSlot | undefined;
      let pending: Pending | null = null;
      let idle = false;
      for (const candidate of this.#slots) {
        if (candidate.state !== "idle") continue;
        idle = true;
        pending = this.#next(candidate);
        if (pending !== null) {
          slot = candidate;
          break;
        }
      }
      if (!idle && this.#slots.length < this.#size) this.#spawn();
      if (pending === null || slot === undefined) return;
      const batch = pending.chain ? [pending, ...this.#mates(pending)] : [pending];
      for (const p of batch) p.slot = slot;
      slot.start(pending.chain ? this.#chainMessage(slot, batch) : this.#message(slot, pending));
      this.#options.onDispatch?.(pending.job.type, pending.job.tenantId);
    }
  }

  /**
   * One timer for every queued job's deadline (rather than one per job): it
   * fires at the earliest, settles what has expired as timeouts, and re-arms
   * for the next.
   */
  #armExpiry(deadline: number): void {
    if (this.#expiry !== undefined && this.#expiryAt <= deadline) return;
    this.#disarmExpiry();
    this.#expiryAt = deadline;
    this.#expiry = setTimeout(() => {
      this.#disarmExpiry();
      const now = performance.now();
      let next = Infinity;
      for (const pending of [...this.#queue]) {
        if (pending.deadline === undefined) continue;
        if (pending.deadline <= now) {
          this.#queue.splice(this.#queue.indexOf(pending), 1);
          pending.settle(failed("TIMEOUT"));
        } else next = Math.min(next, pending.deadline);
      }
      if (next < Infinity) this.#armExpiry(next);
    }, Math.max(0, deadline - performance.now()));
  }

  #disarmExpiry(): void {
    clearTimeout(this.#expiry);
    this.#expiry = undefined;
    this.#expiryAt = Infinity;
  }

  /**
   * The next call to start: the oldest one of the tenant with the fewest calls
   * running, so a tenant whose hooks run at their limits holds at most its
   * share of the workers while others wait. While two or more tenants are
   * active, no tenant may hold every worker: one stays free for the others
   * (null: every waiting call belongs to a tenant at that cap).
   */
  #next(slot: WorkerSlot): Pending | null {
    const running = new Map<string, number>();
    for (const slot of this.#slots) {
      const tenant = slot.tenant;
      if (tenant !== null) running.set(tenant, (running.get(tenant) ?? 0) + 1);
    }
    const cap = this.#tenantCap();
    let best = -1;
    let bestRunning = Infinity;
    for (let i = 0; i < this.#queue.length; i++) {
      const pin = this.#queue[i]!.pin;
      if (pin !== undefined && pin !== slot) continue;
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

  /**
   * Chains of the same tenant waiting behind `first`, taken to run in the
   * same message (up to {@linkcode CHAIN_BATCH}). A worker that stays busy
   * costs far less per event than one woken for every message; a batch only
   * ever holds one tenant's chains, so a slow one delays no other tenant.
   */
  #mates(first: Pending): Pending[] {
    const mates: Pending[] = [];
    for (let i = 0; i < this.#queue.length && mates.length < CHAIN_BATCH - 1;) {
      const p = this.#queue[i]!;
      if (p.chain !== undefined && p.job.tenantId === first.job.tenantId) {
        mates.push(p);
        this.#queue.splice(i, 1);
      } else i++;
    }
    return mates;
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
    const { job, hook, bytes, onOverrun } = pending;
    const settle = (result: RunResult) => pending.settle(result);
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
      return { message, killAfterMs: this.#loadAllowance, onOverrun, allowedHosts, settle };
    }
    // Loading happens before the call's clock starts (the worker says when).
    const runMs = job.limits.timeoutMs + this.#grace;
    const killAfterMs = seen.loaded ? runMs : this.#loadAllowance + runMs;
    return { message, killAfterMs, runMs, onOverrun, allowedHosts, settle };
  }

  /** A chain job: every hook's definition the worker lacks; one kill timer for all. */
  #chainMessage(slot: WorkerSlot, batch: Pending[]): SlotJob {
    const forget: number[] = [];
    const keys = new Set<number>();
    let loaded = true;
    let runMs = 0;
    const chains: ChainSpec[] = batch.map(({ chain }) => {
      const links: ChainLink[] = chain!.links.map((link) => {
        keys.add(link.key);
        const seen = slot.admit(link.key, `${link.limits.memoryMb}:${link.limits.moduleKb}`);
        forget.push(...seen.forget);
        loaded &&= seen.loaded;
        // A prompt hook runs nothing: its timeout does not lengthen the chain's.
        if (link.bytes !== undefined) runMs += link.limits.timeoutMs + this.#grace;
        if (!seen.fresh) return { key: link.key };
        return link.bytes === undefined
          ? { key: link.key, hook: link.hook }
          : { key: link.key, hook: link.hook, bytes: link.bytes };
      });
      const { event, policy, env } = chain!;
      const eventText = textOf(event) ?? madeText(event);
      return eventText ? { links, eventText, policy, env } : { links, event, policy, env };
    });
    const message: WorkerJob = {
      ...batch[0]!.job,
      id: this.#nextId++,
      forget: forget.filter((key) => !keys.has(key)),
      announce: false,
      chains,
    };
    return {
      message,
      killAfterMs: loaded ? runMs : this.#loadAllowance + runMs,
      onOverrun: batch[0]!.onOverrun,
      allowedHosts: [],
      settle: (result, answers) => batch.forEach((p, i) => p.settle(result, answers?.[i])),
    };
  }

  #spawn(): void {
    this.workersStarted++;
    const share = Math.floor((this.#options.warmBytes ?? WARM_POOL_BYTES) / this.#size);
    let slot: WorkerSlot;
    try {
      slot = this.#newSlot(share);
    } catch (err) {
      // No thread could start (the process out of file descriptors): what waits fails now, and
      // the next call tries again.
      const why = `a worker thread could not start: ${(err as Error)?.message ?? err}`;
      for (const pending of this.#queue.splice(0)) pending.settle(failed("WORKER_FAILED", why));
      return;
    }
    this.#slots.push(slot);
  }

  #newSlot(share: number): WorkerSlot {
    return new WorkerSlot(
      this.#entry,
      {
        idle: () => this.#pump(),
        dead: (dead, starting, failure) => {
          this.#slots = this.#slots.filter((s) => s !== dead);
          // Jobs only that worker could take end with it.
          if (this.#queue.some((p) => p.pin === dead)) {
            const orphans = this.#queue.filter((p) => p.pin === dead);
            this.#queue = this.#queue.filter((p) => p.pin !== dead);
            for (const pending of orphans) pending.settle(failed("ABORTED"));
          }
          if (!starting) return this.#pump();
          // A worker that cannot start: fail what waits instead of retrying forever.
          const queued = this.#queue;
          this.#queue = [];
          for (const pending of queued) {
            pending.settle(failed(failure.code, failure.message ?? undefined));
          }
        },
      },
      share,
      this.#size,
      this.#options.startWorker,
    );
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

/**
 * The text of an event made on this thread that still holds big parts of
 * the request as text (`lazy_json.ts`): a hook's rewrite of an agent's big
 * event, re-checked. Sent as text, those parts are copied, not parsed and
 * cloned; undefined for any other event, which is cloned as it is.
 */
function madeText(event: HookEvent): EventText | undefined {
  if (!holdsLazy(event)) return undefined;
  return { text: stringifyLazy(event), tenantId: event.tenant_id ?? "", checked: true };
}
