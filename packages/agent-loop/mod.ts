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
