/**
 * The dispatch result of SPEC §4: the library return value, `dispatch`
 * stdout and the HTTP body.
 *
 * @module
 */
import type { HookLevel } from "../hook/types.ts";
import type { FailureCode, RuntimeKind } from "../runtime/types.ts";
import type { EventType } from "../schema/event_types.ts";
import type { InjectItem } from "../schema/output.ts";

/** How one hook's call ended. */
export type Outcome = "ok" | "block" | "error" | "timeout" | "limit" | "skipped" | "async";

/** One hook's line in the result. */
export interface HookRecord {
  /** The hook's name. */
  name: string;
  /** Where the hook was installed. */
  level: HookLevel;
  /** The runtime that ran it. */
  runtime: RuntimeKind;
  /** How the call ended. */
  outcome: Outcome;
  /** The exit code, when the hook exited. */
  exit_code: number | null;
  /** Wall time of the call, ms; 0 when the hook never ran (refused, or it could not load). */
  duration_ms: number;
  /** What it printed on stdout (capped). */
  stdout: string;
  /** What it printed on stderr (capped). */
  stderr: string;
  /** Stable failure code (docs/errors.md) when the call failed or was skipped, else null. */
  code: FailureCode | null;
  /** SPEC §4's cause: the code's token and its message, or a note on a block that was ignored. */
  detail: string | null;
  /** Metered instructions the call used (0 for hooks that are not WebAssembly). */
  fuel: number;
}

/** What dispatching one event decided. */
export interface DispatchResult {
  /** The event's type. */
  event_type: EventType;
  /** The chain's decision. */
  decision: "allow" | "block";
  /** Why it blocked (or a hook's reason for allowing). */
  reason: string | null;
  /** The hook that blocked, or null. */
  blocked_by: string | null;
  /** The tool input as the hooks rewrote it, or null. */
  modified_input: unknown;
  /** The tool output as the hooks rewrote it, or null. */
  modified_output: unknown;
  /** Messages the hooks asked to inject. */
  inject: InjectItem[];
  /** Tools the hooks disabled. */
  disable_tools: string[];
  /** Tools the hooks enabled. */
  enable_tools: string[];
  /** The shared store after the chain. */
  store: Record<string, unknown>;
  /** One record per hook that ran (or was started, for async hooks), in order. */
  hooks: HookRecord[];
}

/** The result of an event no hook answered: allow, nothing changed, `store` passed through. */
export function allowResult(type: EventType, store: Record<string, unknown> = {}): DispatchResult {
  return {
    event_type: type,
    decision: "allow",
    reason: null,
    blocked_by: null,
    modified_input: null,
    modified_output: null,
    inject: [],
    disable_tools: [],
    enable_tools: [],
    store,
    hooks: [],
  };
}
