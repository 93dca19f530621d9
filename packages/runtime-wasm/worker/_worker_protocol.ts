/**
 * Messages between a {@linkcode WorkerRuntime} (main thread) and its workers
 * (`_worker_entry.ts`). Everything here is structured-cloneable: hook
 * definitions are plain data, plugin bytes are sent once per worker.
 *
 * @module
 */
import type { DispatchResult } from "../../core/dispatch/result.ts";
import type { HookDefinition } from "../../core/hook/types.ts";
import type { Policy } from "../../core/policy.ts";
import type { HookEvent } from "../../core/schema/event.ts";
import type { EventText } from "../../core/schema/event_text.ts";
import type { BigText } from "../../core/schema/lazy_json.ts";
import type { EffectiveLimits, RunResult, RuntimeStats } from "../../core/runtime/types.ts";
import type { HttpAsk } from "../http/_http_wire.ts";

/** One hook of a chain job: its key, with its definition (and a plugin's bytes) the first time. */
export interface ChainLink {
  key: number;
  hook?: HookDefinition;
  bytes?: Uint8Array;
}

/**
 * One synchronous chain of a chain job. The event is sent whole, or as the
 * text it was parsed from (`event_text.ts`), which crosses for a fraction of
 * the structured clone's cost and is parsed again here.
 */
export interface ChainSpec {
  links: ChainLink[];
  event?: HookEvent;
  eventText?: EventText;
  policy: Policy;
  env: Record<string, string>;
}

/**
 * Main → worker, once, before any job: the process's count of the function
 * types its threads have handed the engine (rewriter `shareTypeBudget`), and
 * the worker's share of the runtime's `warmBytes`.
 */
export interface WorkerTypes {
  type: "types";
  buffer: ArrayBufferLike;
  warmBytes: number;
  /** The runtime's workers: this one keeps its share of the process's idle instances. */
  shareOf: number;
}

/**
 * Main → worker: prepare a hook, run one call, or run whole synchronous
 * chains, one after another (`chains`, all of one tenant; `key`, `hook`,
 * `bytes` and `limits` are unused). One job at a time per worker.
 */
export interface WorkerJob {
  type: "run" | "prepare" | "chain";
  id: number;
  /** Main-side number of the hook definition; the worker keeps it until told to forget. */
  key: number;
  /** Sent with the first job for `key` on a worker. */
  hook?: HookDefinition;
  bytes?: Uint8Array;
  /** Keys the worker may drop (the main side evicted them). */
  forget: number[];
  limits: EffectiveLimits;
  input: Uint8Array;
  env: Record<string, string>;
  tenantId: string;
  /** Hosts granted for Extism HTTP (run jobs). */
  allowedHosts?: readonly string[];
  /**
   * Say "started" once the plugin is loaded (the main side then starts the
   * call's clock). Not needed when the worker had it loaded already: the
   * clock started with the job, and one message per call is saved.
   */
  announce: boolean;
  chains?: ChainSpec[];
}

/** Worker → main. */
export type WorkerMessage =
  | { type: "ready" }
  /** The plugin is loaded; the call's clock starts now. */
  | { type: "started"; id: number }
  /** A chain job's answers are `chains`, one per chain, in order. */
  | {
    type: "result";
    id: number;
    result: RunResult;
    chains?: DispatchResult[];
    /** The chains' big hook texts, taken out of `chains` (core/schema/lazy_json.ts). */
    texts?: BigText[];
  }
  /** What the worker's runtime holds, sent at most once a second after jobs end. */
  | { type: "stats"; stats: RuntimeStats }
  | HttpAsk;
