/**
 * The in-process agent API (SPEC §8, seeds 001–004): hooks an agent loop
 * calls at each step, sandboxed hook folders joined as one hook, skill prompt
 * hooks, and a reference agent loop that uses them all.
 *
 * @module
 */
export * from "./types.ts";
export {
  HookContext,
  type HookContextInit,
  LLMRequest,
  type RunTracker,
  ToolCallInfo,
  type ToolResultInfo,
} from "./context.ts";
export {
  type AgentHook,
  type CompactInfo,
  HookManager,
  type HookManagerOptions,
  type MaybePromise,
  type StopInfo,
  type SubagentInfo,
  type Verdict,
} from "./hook.ts";
export { sandboxHooks, type SandboxHooksOptions } from "./sandbox.ts";
export {
  PROMPT_TIMINGS,
  type PromptHookInfo,
  PromptHookManager,
  type PromptTiming,
} from "./prompt_hooks.ts";
export {
  MAX_PROMPT_BYTES,
  MAX_PROMPT_CONFIG_BYTES,
  MAX_PROMPT_HOOKS_PER_SKILL,
  MAX_SKILLS,
  scanPromptHooks,
} from "./prompt_scan.ts";
export {
  AgentExecutor,
  type AgentExecutorOptions,
  type AgentModel,
  type AgentTool,
  type CompactOptions,
  type ModelAnswer,
  type ModelCallInfo,
  type RunOptions,
  type ToolRunContext,
} from "./loop.ts";

// Types the exports above refer to.
export type { DispatchResult, HookRecord, Outcome } from "../core/dispatch/result.ts";
export type { ErrorCode } from "../core/errors.ts";
export { ERROR_CODES } from "../core/errors.ts";
export type { DispatchCallOptions, Executor } from "../core/executor.ts";
export type { HookProblem } from "../core/hook/discover.ts";
export type { HookDefinition, HookEntry, HookLevel, WasmFormat } from "../core/hook/types.ts";
export type { DirEntry, HostFs, PathInfo } from "../core/host.ts";
export type { Policy } from "../core/policy.ts";
export type { FailureCode } from "../core/runtime/failure.ts";
export { FAILURE_CODES } from "../core/runtime/failure.ts";
export type { RuntimeKind } from "../core/runtime/types.ts";
export type { EventType } from "../core/schema/event_types.ts";
export { EVENT_TYPES } from "../core/schema/event_types.ts";
export type { Manifest, ManifestLimits } from "../core/schema/manifest.ts";
export type { InjectItem } from "../core/schema/output.ts";
