/**
 * Prompt hooks for skills (seed 003): declared messages a skill injects at
 * five points of the agent flow and removes again by the seed's table.
 *
 * | timing               | removed                                         |
 * | -------------------- | ----------------------------------------------- |
 * | `after_user_input`   | never (lives as long as the request's messages) |
 * | `before_planning`    | after the planning round's model call           |
 * | `before_each_agent`  | before the next round's injection               |
 * | `before_first_agent` | after the agent loop                            |
 * | `after_tool_call`    | before the next injection after tools           |
 *
 * Persistent hooks are never removed (`remove` is a no-op for them) and are
 * handed back by `inject` so the client keeps them in its history; nothing is
 * de-duplicated.
 *
 * @module
 */
import type { Message, PromptInjection } from "./types.ts";

/** The five checkpoints of seed 003. */
export const PROMPT_TIMINGS = [
  "after_user_input",
  "before_planning",
  "before_first_agent",
  "before_each_agent",
  "after_tool_call",
] as const;

/** One checkpoint. */
export type PromptTiming = typeof PROMPT_TIMINGS[number];

/** One prompt hook, as {@linkcode scanPromptHooks} reads it. */
export interface PromptHookInfo {
  /** The skill it belongs to. */
  skill: string;
  /** Its name. */
  name: string;
  /** The `.md` file its text came from (relative to the skill's `hooks/`). */
  file: string;
  /** When it is injected. */
  timing: PromptTiming;
  /** The message's role. */
  role: "system" | "user";
  /** Kept by the client across requests (and never removed). */
  persistent: boolean;
  /** `after_tool_call` only: the tools it fires after; null for every tool. */
  toolFilter: string[] | null;
  /** The message's text. */
  content: string;
}

interface Injected {
  hook: PromptHookInfo;
  message: Message;
}

/**
 * Injects and removes prompt-hook messages in one message list (seed 003's
 * `HookManager`), by reference: the list is the one sent to the model.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PromptHookManager } from "./prompt_hooks.ts";
 * const messages = [{ role: "user", content: "hi" }];
 * const hints = new PromptHookManager(messages, [{
 *   skill: "s", name: "plan-hint", file: "plan.md", timing: "before_planning",
 *   role: "system", persistent: false, toolFilter: null, content: "Plan first.",
 * }]);
 * hints.inject("before_planning");
 * assert.equal(messages.length, 2);
 * hints.remove("before_planning");
 * assert.equal(messages.length, 1);
 * ```
 */
export class PromptHookManager {
  #messages: Message[];
  #hooks: readonly PromptHookInfo[];
  #injected = new Map<PromptTiming, Injected[]>();

  /** Manages `hooks` in `messages` (changed in place). */
  constructor(messages: Message[], hooks: readonly PromptHookInfo[]) {
    this.#messages = messages;
    this.#hooks = hooks;
  }

  /**
   * Appends every hook of `timing` (for `after_tool_call`, those whose
   * `toolFilter` names `toolName`, or that have none) — every time, no
   * de-duplication — and returns the persistent ones for the client to keep.
   */
  inject(timing: PromptTiming, options: { toolName?: string } = {}): PromptInjection[] {
    checkTiming(timing);
    const kept: PromptInjection[] = [];
    const record = this.#injected.get(timing) ?? [];
    for (const hook of this.#hooks) {
      if (hook.timing !== timing || !passesFilter(hook, options.toolName)) continue;
      const message: Message = { role: hook.role, content: hook.content };
      this.#messages.push(message);
      record.push({ hook, message });
      if (hook.persistent) kept.push({ name: hook.name, role: hook.role, content: hook.content });
    }
    this.#injected.set(timing, record);
    return kept;
  }

  /** Takes the non-persistent messages of `timing` out again; persistent ones stay. */
  remove(timing: PromptTiming): void {
    checkTiming(timing);
    const kept: Injected[] = [];
    for (const entry of this.#injected.get(timing) ?? []) {
      if (entry.hook.persistent) kept.push(entry);
      else this.removePrompt(entry.message);
    }
    this.#injected.set(timing, kept);
  }

  /** True when `message` is a prompt-hook message this manager injected and still tracks. */
  tracks(message: Message): boolean {
    for (const entries of this.#injected.values()) {
      if (entries.some((e) => e.message === message)) return true;
    }
    return false;
  }

  /** Appends a built-in prompt (seed 003's planning / step prompts); returns its reference. */
  injectPrompt(content: string, role: "system" | "user" = "system"): Message {
    const message: Message = { role, content };
    this.#messages.push(message);
    return message;
  }

  /** Removes a message by reference (no-op when it is gone, e.g. compacted away). */
  removePrompt(ref: Message): void {
    const at = this.#messages.indexOf(ref);
    if (at >= 0) this.#messages.splice(at, 1);
  }
}

function passesFilter(hook: PromptHookInfo, toolName: string | undefined): boolean {
  if (hook.timing !== "after_tool_call" || !hook.toolFilter || hook.toolFilter.length === 0) {
    return true;
  }
  return toolName !== undefined && hook.toolFilter.includes(toolName);
}

function checkTiming(timing: string): void {
  if (!(PROMPT_TIMINGS as readonly string[]).includes(timing)) {
    throw new TypeError(`timing must be one of ${PROMPT_TIMINGS.join(", ")}, got "${timing}"`);
  }
}
