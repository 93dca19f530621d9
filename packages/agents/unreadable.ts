/**
 * Unreadable means blocked where a closed guard applies (SPEC §4.7): an agent
 * payload hookbox cannot evaluate — over the size cap, not JSON, not an
 * object, naming no event, nested too deep — is answered as that agent's
 * block whenever a synchronous hook that could apply to it says
 * `on_error: closed` (or hookbox runs `--strict`), never as the agent's
 * non-blocking error. The model writes the tool arguments, so without this a
 * padded argument would switch every guard off. Web APIs only: the CLI and
 * the service's agents route share it.
 *
 * @module
 */
import { allowResult, type DispatchResult } from "../core/dispatch/result.ts";
import type { HookDefinition } from "../core/hook/types.ts";
import { MATCHER_STEPS_PER_EVENT, type StepBudget } from "../core/schema/matcher.ts";
import { manifestMatcher } from "../core/dispatch/select.ts";
import type { EventType } from "../core/schema/event_types.ts";
import { TOOL_EVENTS } from "../core/schema/event_types.ts";
import {
  AGENT_EVENTS,
  type AgentAnswer,
  agentAnswer,
  type AgentCall,
  type AgentName,
  withheldNotice,
} from "./adapters.ts";

/** How much of an unreadable payload is scanned for its event name, tool name and folder. */
export const PREFIX_BYTES = 64 * 1024;

/** What stands in for a subtree nested deeper than the cap (SPEC §4.7: guards keep running). */
export const CUT_MARKER = "[hookbox: cut, nested deeper than the event's depth cap]";

/** The top-level fields read from a payload's prefix. */
export interface PayloadHead {
  /** The agent's event name (`hook_event_name`, `agent_action_name`, `event_type`). */
  event?: string;
  /** `tool_name` / `toolName`, when it comes before the cut. */
  tool?: string;
  /** `cwd`, when it comes before the cut. */
  cwd?: string;
}

const HEAD_KEYS: Record<string, keyof PayloadHead> = {
  hook_event_name: "event",
  agent_action_name: "event",
  event_type: "event",
  tool_name: "tool",
  toolName: "tool",
  cwd: "cwd",
};

/**
 * Reads the top-level string fields of a JSON object from the first
 * {@linkcode PREFIX_BYTES} of `text`, which may be cut anywhere or invalid
 * further on. Only keys of the outermost object count: the same key nested
 * in a tool argument (which the model writes) is never read. A field whose
 * keys give it two values, or a value that is not a string, is left out, so
 * no closed guard is passed over on a name the agent did not act on.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readHead } from "./unreadable.ts";
 * const text = '{"tool_input": {"hook_event_name": "X"}, "hook_event_name": "PreToolUse", "pad": [[[';
 * assert.deepEqual(readHead(text), { event: "PreToolUse" });
 * ```
 */
export function readHead(text: string): PayloadHead {
  const head: PayloadHead = {};
  // Each head key's string value, or null: a key given twice with two values is unclear
  // (`JSON.parse` and the agent take the last; a scan cut short cannot know which is last), and
  // so is a key whose value is not a string.
  const given = new Map<string, string | null>();
  const give = (key: string, value: string | null) => {
    const before = given.get(key);
    given.set(key, before === undefined || before === value ? value : null);
  };
  const end = Math.min(text.length, PREFIX_BYTES);
  let depth = 0;
  let expectKey = false;
  let key: string | null = null;
  for (let i = 0; i < end; i++) {
    const ch = text[i]!;
    if (ch === '"') {
      const close = stringEnd(text, i, end);
      if (close < 0) break;
      if (depth === 1) {
        let value: string;
        try {
          value = JSON.parse(text.slice(i, close + 1));
        } catch {
          break;
        }
        if (expectKey) key = value;
        else if (key !== null && Object.hasOwn(HEAD_KEYS, key)) give(key, value);
        expectKey = false;
      }
      i = close;
    } else if (ch === "{" || ch === "[") {
      depth++;
      expectKey = depth === 1 && ch === "{";
    } else if (ch === "}" || ch === "]") {
      depth--;
      if (depth < 1) break;
    } else if (ch === "," && depth === 1) {
      expectKey = true;
      key = null;
    } else if (ch === ":" && depth === 1) {
      expectKey = false;
      // A head key whose value is not a string (a number, an object) names nothing.
      if (key !== null && Object.hasOwn(HEAD_KEYS, key)) {
        let next = i + 1;
        while (next < end && " \t\n\r".includes(text[next]!)) next++;
        if (next < end && text[next] !== '"') give(key, null);
      }
    }
  }
  // A field is named when all its keys given agree (adapters read `toolName` or `tool_name`
  // first as their agent sends them, so two that differ name neither).
  const unclear = new Set<keyof PayloadHead>();
  for (const [key, value] of given) {
    const field = HEAD_KEYS[key]!;
    if (value === null || (head[field] !== undefined && head[field] !== value)) {
      unclear.add(field);
    } else head[field] = value;
  }
  for (const field of unclear) delete head[field];
  return head;
}

/** The index of the quote that closes the string opening at `start`, or -1 before `end`. */
function stringEnd(text: string, start: number, end: number): number {
  for (let i = start + 1; i < end; i++) {
    const ch = text[i];
    if (ch === "\\") i++;
    else if (ch === '"') return i;
  }
  return -1;
}

/**
 * `value` with every array or object nested `max` levels deep replaced by
 * {@linkcode CUT_MARKER}, and the dotted paths that were cut (at most 10
 * named). Copies only what it must keep; recursion is bounded by `max`.
 */
export function cutDeep(value: unknown, max: number): { value: unknown; cut: string[] } {
  const cut: string[] = [];
  const walk = (node: unknown, depth: number, path: string): unknown => {
    if (typeof node !== "object" || node === null) return node;
    if (depth >= max) {
      if (cut.length < 10) cut.push(path);
      return CUT_MARKER;
    }
    const at = (key: string) => path === "" ? key : `${path}.${key}`;
    if (Array.isArray(node)) return node.map((item, i) => walk(item, depth + 1, at(String(i))));
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(node)) {
      Object.defineProperty(out, key, {
        value: walk(child, depth + 1, at(key)),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  };
  return { value: walk(value, 0, ""), cut };
}

/** The §1 event an agent's event name maps to, or null. */
export function mappedType(agent: AgentName, name: string | undefined): EventType | null {
  if (name === undefined) return null;
  if (agent === "agenthooks") return name.replaceAll("_", "-") as EventType;
  return AGENT_EVENTS[agent][name]?.type ?? null;
}

/**
 * The first synchronous hook that could apply to an event of `type` (any
 * type when null) with `tool` (unknown when undefined) and would turn a
 * failure into a block: `on_error: closed`, or any hook when `strict`.
 * Matchers that need the unreadable part (`pattern`), or that `budget` (the
 * steps the tool matchers may take together, an event's matcher budget by
 * default) cannot answer, are taken to fit.
 */
export function closedGuard(
  hooks: readonly HookDefinition[],
  type: EventType | null,
  tool: string | undefined,
  strict = false,
  budget: StepBudget = { left: MATCHER_STEPS_PER_EVENT },
): HookDefinition | null {
  for (const hook of hooks) {
    const { manifest } = hook;
    if (manifest.async || hook.entry.runtime === "prompt") continue;
    if (!strict && manifest.on_error !== "closed") continue;
    if (type !== null && !manifest.trigger.includes(type)) continue;
    if (manifest.matcher?.tool !== undefined && tool !== undefined && type !== null) {
      if (!TOOL_EVENTS.has(type)) continue;
      // One budget for all the guards' matchers, their compiles included; one it cannot answer fits.
      if (manifestMatcher(manifest, "tool", budget)?.testWithin(tool, budget) === false) continue;
    }
    return hook;
  }
  return null;
}

/**
 * The agent's block for an event hookbox could not evaluate, in that agent's
 * protocol: `reason` names the limit. For an event name hookbox cannot read or
 * map, exit 2 with the reason on stderr (a block in every agent's command
 * protocol that has one). After a tool ran (post-tool-call) the output is
 * replaced by a notice that it was withheld, where the agent can replace it.
 */
export function unreadableBlock(
  agent: AgentName,
  agentEvent: string | undefined,
  reason: string,
  guard: string,
): AgentAnswer {
  const type = mappedType(agent, agentEvent);
  if (type === null || agentEvent === undefined) {
    return { exitCode: 2, stdout: "", stderr: reason };
  }
  const call: AgentCall = {
    agent,
    agentEvent,
    event: { event_type: type, tool_input: {} },
    input: {},
  };
  if (type === "post-tool-call") {
    // The tool has run: blocking cannot take back what the model is about to read. Where the
    // agent can replace the output, the unreadable output is withheld instead.
    const withheld = withheldNotice(reason);
    return agentAnswer(call, {
      ...blockedResult(type, reason, guard),
      decision: "allow",
      reason: null,
      blocked_by: null,
      modified_output: withheld,
    });
  }
  return agentAnswer(call, blockedResult(type, reason, guard));
}

/** A dispatch result that blocks with `reason`, by `guard`. */
export function blockedResult(type: EventType, reason: string, guard: string): DispatchResult {
  return { ...allowResult(type), decision: "block", reason, blocked_by: guard };
}
