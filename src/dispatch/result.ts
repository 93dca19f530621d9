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
  name: string;
  level: HookLevel;
  runtime: RuntimeKind;
  outcome: Outcome;
  exit_code: number | null;
  duration_ms: number;
  stdout: string;
  stderr: string;
  /** Stable failure code (docs/FAILURES.md) when the call failed or was skipped, else null. */
  code: FailureCode | null;
  /** SPEC §4's cause: the code's token and its message, or a note on a block that was ignored. */
  detail: string | null;
  /** Metered instructions the call used (0 for hooks that are not WebAssembly). */
  fuel: number;
}

/** What dispatching one event decided. */
export interface DispatchResult {
  event_type: EventType;
  decision: "allow" | "block";
  reason: string | null;
  blocked_by: string | null;
  modified_input: unknown;
  modified_output: unknown;
  inject: InjectItem[];
  disable_tools: string[];
  enable_tools: string[];
  store: Record<string, unknown>;
  hooks: HookRecord[];
}
