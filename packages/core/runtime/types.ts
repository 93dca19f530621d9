/**
 * The seam every hook runtime sits behind. The dispatcher knows only this
 * interface; subprocess, WebAssembly and prompt runtimes implement it.
 *
 * @module
 */
import type { DispatchResult } from "../dispatch/result.ts";
import type { HookDefinition } from "../hook/types.ts";
import type { Policy } from "../policy.ts";
import type { HookEvent } from "../schema/event.ts";
import type { RunFailure } from "./failure.ts";

/** Which runtime executed a hook (SPEC §4 `runtime`). */
export type RuntimeKind = "wasm" | "subprocess" | "prompt";

/** Limits in force for one call, after the host policy lowered the hook's own. */
export interface EffectiveLimits {
  /** Linear memory cap in MiB. */
  memoryMb: number;
  /** Metered instructions per call. */
  fuel: number;
  /** Cap on stdout and on stderr, each, in KiB. */
  outputKb: number;
  /** Cap on the event JSON handed to the hook, in KiB. */
  inputKb: number;
  /** Cap on a WebAssembly module's size, in KiB. */
  moduleKb: number;
  /** Wall-clock budget in milliseconds. */
  timeoutMs: number;
}

/** One call of one hook. */
export interface RunRequest {
  /** The hook to run. */
  hook: HookDefinition;
  /** The event as JSON bytes (stdin for WASI/subprocess, Extism input). */
  input: Uint8Array;
  /** `HOOKBOX_*` variables a subprocess sees (wasm hooks get none unless granted). */
  env: Record<string, string>;
  /** The limits of this call. */
  limits: EffectiveLimits;
  /** Tenant the call is made for; keys caches and warm instances. */
  tenantId: string;
  /**
   * Hosts the call may reach through Extism HTTP, already narrowed by the
   * operator's policy (see `grantedHosts` in policy.ts). @default []
   */
  allowedHosts?: readonly string[];
  /** Aborted when the executor closes. */
  signal?: AbortSignal;
  /**
   * `performance.now()` when the caller started the call; the timeout counts
   * from it. @default the moment `run` is called
   */
  started?: number;
}

export type { FailureCode, RunFailure } from "./failure.ts";

/** What a runtime reports back: the exit code / stdout / stderr protocol of SPEC §3. */
export interface RunResult {
  /** Exit code, or null when the hook never exited normally. */
  exitCode: number | null;
  /** stdout, capped. */
  stdout: string;
  /** stderr, capped. */
  stderr: string;
  /** Set when the call errored, timed out, hit a limit or was skipped. */
  failure?: RunFailure;
  /** Metered instructions the call used (WebAssembly hooks; absent for others). */
  fuel?: number;
}

/** A hook runtime. Implementations must never throw for a hook's own misbehaviour. */
export interface Runtime {
  /** Which hooks this runtime runs. */
  readonly kind: RuntimeKind;
  /**
   * True when `run` enforces the deadline itself, on the caller's thread
   * (fuel plus clock checks inside the call): the dispatcher then sets no
   * backstop timer of its own. @default false
   */
  readonly selfTimed?: boolean;
  /**
   * True when `run` reads `request.input` only until its promise settles (it
   * copies what it keeps): with `selfTimed` (so the dispatcher never returns
   * before the run settled) it may then encode a later event into the same
   * buffer instead of allocating one per call. @default false
   */
  readonly borrowsInput?: boolean;
  /** Run one call. Rejects only for host faults; hook faults come back as `failure`. */
  run(request: RunRequest): Promise<RunResult>;
  /**
   * Loads / compiles what `run` needs for this hook, outside the call's time
   * budget (compilation is the host's cost, not the hook's). Resolves to the
   * failure the hook's record should show when it cannot run, else null.
   */
  prepare?(hook: HookDefinition, limits: EffectiveLimits): Promise<RunFailure | null>;
  /**
   * {@linkcode prepare} everywhere it can run (each worker of a worker pool),
   * so that no first event pays for it. Optional: `prepare` otherwise.
   */
  prepareAll?(hook: HookDefinition, limits: EffectiveLimits): Promise<RunFailure | null>;
  /**
   * Runs a whole synchronous chain of this runtime's hooks in one go (worker
   * mode: one message to one worker per event instead of one per hook). The
   * answer is the chain's result (its `hooks` are the records of the hooks
   * that ran, in order); a failure when the chain as a whole could not finish
   * (its worker was killed, the call was aborted); null when the runtime
   * cannot run this chain at once and the dispatcher should call hook by hook.
   */
  runChain?(request: ChainRequest): Promise<ChainAnswer>;
  /** What the runtime holds now, for metrics and benchmarks. */
  stats?(): RuntimeStats;
  /** Release cached instances, processes and timers. */
  close?(): Promise<void>;
}

/** What a runtime holds at a moment ({@linkcode Runtime.stats}). */
export interface RuntimeStats {
  /** Idle warm instances kept for reuse. */
  warmInstances: number;
  /** Bytes those instances hold: linear memory plus restore snapshot. */
  warmIdleBytes: number;
  /** Instances running a call now (created and not yet closed or idle again); a worker pool's busy workers. */
  running?: number;
  /** Calls waiting for a worker (a worker pool). */
  queued?: number;
  /** Worker threads alive (a worker pool). */
  workers?: number;
  /** Plugins kept loaded (compiled) for later calls. */
  keptPlugins?: number;
  /** The bytes those plugins were loaded from (their cap: `keptPluginBytes`). */
  keptPluginBytes?: number;
  /** The bytes of every plugin loaded in the runtime's life, let go or not (`loadedPluginBytes`). */
  loadedPluginBytes?: number;
  /** Zeroed memories kept for fresh calls of the kept plugins, bytes. */
  pooledMemoryBytes?: number;
}

/** A synchronous chain of hooks for {@linkcode Runtime.runChain}. */
export interface ChainRequest {
  /** The hooks, in dispatch order; all of the runtime's kind, none with granted hosts. */
  hooks: readonly HookDefinition[];
  /** The event, as the first hook sees it. */
  event: HookEvent;
  /** The policy of the call. */
  policy: Policy;
  /** The tenant the event belongs to. */
  tenantId: string;
  /** Extra `HOOKBOX_*` variables. */
  env: Record<string, string>;
  /** Aborts the chain (executor shut down). */
  signal?: AbortSignal;
}

/** What {@linkcode Runtime.runChain} answers. */
export type ChainAnswer = { result: DispatchResult } | { failure: RunFailure } | null;
