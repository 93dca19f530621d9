/**
 * The data an agent loop hands its hooks (seed 001, in TypeScript): messages
 * in the OpenAI chat shape, tool schemas, steps and the run's output.
 *
 * @module
 */

/** One chat message. `content` is usually a string; anything JSON is carried. */
export interface Message {
  /** `system`, `user`, `assistant` or `tool`. */
  role: string;
  /** The text (or structured content) of the message. */
  content: unknown;
  /** Further fields (`tool_calls`, `tool_call_id`, `name`, ...) pass through. */
  [key: string]: unknown;
}

/** A tool as the model sees it (OpenAI function-tool shape). */
export interface ToolSchema {
  /** Always `function` in this shape. */
  type?: string;
  /** The function's name, description and JSON-Schema parameters. */
  function: { name: string; description?: string; parameters?: unknown };
  /** Further fields pass through. */
  [key: string]: unknown;
}

/** A tool call the model asked for. */
export interface ToolCall {
  /** The call's id, echoed in the tool result message. */
  id: string;
  /** The tool's name. */
  name: string;
  /** The call's arguments, as an object. */
  arguments: Record<string, unknown>;
}

/** Token counts of one model call. */
export interface Usage {
  /** Tokens sent. */
  promptTokens: number;
  /** Tokens received. */
  completionTokens: number;
}

/** One recorded step of a run: a model answer or a tool result. */
export interface Step {
  /** `assistant` for a model answer, `tool` for a tool result. */
  type: "assistant" | "tool";
  /** The tool's name (tool steps). */
  name?: string;
  /** The answer text or the tool's result text. */
  content: string;
  /** The tool calls the model asked for (assistant steps). */
  toolCalls: ToolCall[];
  /** Token counts (assistant steps). */
  usage?: Usage;
}

/** Seed 002's answer of a blocking callback: `blocked: true` vetoes the call. */
export interface HookOutcome {
  /** The call is vetoed. */
  blocked: boolean;
  /** Why, shown to the agent. */
  reason: string;
}

/** Why a run ended. */
export type TerminationReason =
  | "completed"
  | "blocked"
  | "max_iterations"
  | "stop_budget"
  | "error";

/** What a run returns (seed 001's `RunOutput`). */
export interface RunOutput {
  /** The final answer text. */
  content: string;
  /** Why the run ended. */
  terminationReason: TerminationReason;
  /** The block's reason, or the error's message, when the run did not complete. */
  reason: string | null;
  /** Every step of the run, in order. */
  steps: Step[];
  /** The run's message list as it ended (seed 003's `full_messages`). */
  messages: Message[];
  /**
   * Persistent prompt-hook messages (seed 003) the client keeps in its
   * conversation history and sends back on the next request.
   */
  persistentPrompts: PromptInjection[];
  /** Further fields `onRunEnd` hooks add. */
  [key: string]: unknown;
}

/** A persistent prompt-hook message handed back to the client (seed 003). */
export interface PromptInjection {
  /** The prompt hook's name. */
  name: string;
  /** The message's role. */
  role: "system" | "user";
  /** The message's text. */
  content: string;
}

/** Where an error happened, for `onError`. */
export interface ErrorInfo {
  /** The model call, a tool, or the loop itself. */
  phase: "llm" | "tool" | "run";
}
