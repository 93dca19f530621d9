/**
 * `hookbox dispatch --agent NAME`: the agent's hook stdin → its §1 event →
 * hooks → the agent's own answer. Fails closed at the boundary (SPEC §4.7):
 * a payload hookbox cannot read is the agent's block wherever a closed hook
 * could apply, and is never dropped silently; every failed or skipped hook
 * is one line on stderr and, where the agent shows one, in its user message.
 */
import type { ExecutorOptions } from "../deno/executor.ts";
import {
  type AgentAnswer,
  agentAnswer,
  type AgentCall,
  agentCall,
  type AgentName,
  passThrough,
  withNotices,
} from "../agents/adapters.ts";
import {
  closedGuard,
  cutDeep,
  mappedType,
  type PayloadHead,
  readHead,
  unreadableBlock,
} from "../agents/unreadable.ts";
import type { DispatchResult } from "../core/dispatch/result.ts";
import { isHookboxError } from "../core/errors.ts";
import type { HookDefinition } from "../core/hook/types.ts";
import type { HookProblem } from "../core/hook/discover.ts";
import { MAX_JSON_DEPTH } from "../core/schema/depth.ts";
import { parseEventObject } from "../core/schema/event.ts";
import { stdinOnce, StdinTooLarge, UsageError } from "./_io.ts";
import { lastAnswer, stopCount } from "./_stop.ts";
import { type DispatchFlags, executorFor } from "./_executor.ts";
import {
  blocked,
  brokenGuardResult,
  failureLines,
  guardOfUnreadable,
  lineOf,
  strictResult,
} from "./_fail_closed.ts";

/** The flags of an agent dispatch. */
export interface AgentFlags extends DispatchFlags {
  event?: string | undefined;
  strict?: boolean | undefined;
}

/** Runs one agent hook call; prints its answer and returns the exit code. */
export async function agentDispatch(
  agent: AgentName,
  values: AgentFlags,
  extra: ExecutorOptions,
): Promise<number> {
  const answer = await answerFor(agent, values, extra);
  if (answer.stdout) console.log(answer.stdout);
  if (answer.stderr) console.error(answer.stderr);
  return answer.exitCode;
}

/** The agent's answer to one call (its stdin as `stdinOnce` gives it); the daemon's entry. */
export { answerFor as agentAnswerOf };

async function answerFor(
  agent: AgentName,
  values: AgentFlags,
  extra: ExecutorOptions,
): Promise<AgentAnswer> {
  let text: string;
  try {
    text = await stdinOnce();
  } catch (err) {
    if (!(err instanceof StdinTooLarge)) throw err;
    return await unreadable(agent, values, extra, err.toLine(), readHead(err.head));
  }
  if (text.trim() === "") throw new UsageError("no hook input JSON on stdin");
  let call;
  try {
    call = agentCall(agent, parseEventObject(text), values.event);
  } catch (err) {
    if (!isHookboxError(err)) throw err;
    return await unreadable(agent, values, extra, err.toLine(), readHead(text));
  }
  if (call.event === null) return passThrough(call);
  // Lines for the agent's stderr and systemMessage (a daemon's own stderr is nobody's).
  const notices: string[] = [];
  if (call.event.event_type === "pre-agent-turn-stop") await stopFacts(call, notices);
  // Guards keep running on a payload nested too deep: the deep subtrees are cut, and what
  // the guards could not see counts as unreadable once they have all allowed.
  const { value, cut } = cutDeep(call.event, MAX_JSON_DEPTH);
  call.event = value as Record<string, unknown>;
  const { executor, workDir } = executorFor(call.event, values, extra);
  try {
    let result: DispatchResult;
    try {
      result = await executor.dispatch(
        call.event,
        values.tenant ? { tenantId: values.tenant } : {},
      );
    } catch (err) {
      // Whatever kept the hooks from answering (a fault of hookbox's own included) is decided
      // as an unreadable event: a closed guard that could apply blocks.
      const head = { event: call.agentEvent, ...toolOf(call.event) };
      return await unreadable(agent, values, extra, lineOf(err), head);
    }
    const problems = await executor.problems(workDir);
    const hooks = await executor.hooks(workDir);
    // As the plain dispatch: a broken closed guard first, then --strict.
    result = await brokenGuardResult(result, problems);
    result = failClosed(result, hooks, problems, cut, values.strict === true);
    const lines = [...notices, ...failureLines(result, problems)];
    if (cut.length > 0 && result.decision === "allow") {
      lines.push(
        `hookbox: the payload nests deeper than ${MAX_JSON_DEPTH} levels at ${cut.join(", ")}; ` +
          `the hooks saw it cut there`,
      );
    }
    return withNotices(call, agentAnswer(call, result), lines);
  } finally {
    await executor.close();
  }
}

/**
 * A payload hookbox cannot evaluate: the agent's block when a closed hook
 * could apply (`_fail_closed.ts`), else a failed hook call (exit 1, one line
 * on stderr), which is what it is.
 */
async function unreadable(
  agent: AgentName,
  values: AgentFlags,
  extra: ExecutorOptions,
  problem: string,
  head: PayloadHead,
): Promise<AgentAnswer> {
  const eventName = values.event ?? head.event;
  const type = mappedType(agent, eventName);
  if (eventName !== undefined && type === null && agent !== "agenthooks") {
    // An agent event hookbox does not map: no hook of hookbox's applies to it.
    return { exitCode: 0, stdout: "", stderr: `hookbox: ${problem} (${eventName} passes through)` };
  }
  const guard = await guardOfUnreadable(values, extra, type, head);
  if (guard === null) return { exitCode: 1, stdout: "", stderr: `hookbox: ${problem}` };
  const reason = `hookbox cannot evaluate this ${
    eventName ?? "event"
  }: ${problem}; hook "${guard}" guards it and fails closed`;
  return unreadableBlock(agent, eventName, reason, guard);
}

/**
 * The stop gate's budget and message (`_stop.ts`): `stop_count` counted per
 * session across processes (Cursor sends its own `loop_count`), and the last
 * answer from the transcript where the payload lacks it (Copilot) or holds the
 * whole turn (Gemini's `prompt_response`).
 */
async function stopFacts(call: AgentCall, notices: string[]): Promise<void> {
  const event = call.event!;
  if (call.agent !== "cursor") {
    const retry = call.input.stop_hook_active === true;
    event.stop_count = await stopCount(
      call.agent,
      String(event.session_id),
      retry,
      undefined,
      notices,
    );
  }
  if (call.agent === "copilot" || call.agent === "gemini-cli") {
    // Copilot writes its transcript after it starts the hook: wait for the hook's own start
    // event, which carries this payload's timestamp.
    const stamp = call.input.timestamp;
    const marker = call.agent === "copilot" && typeof stamp === "number"
      ? `"timestamp":${stamp}`
      : undefined;
    const said = await lastAnswer(call.input.transcriptPath ?? call.input.transcript_path, marker)
      .catch(() => null);
    if (said !== null) event.last_message = said;
  }
}

/** The tool name of an event, for matching a guard's `matcher.tool`. */
function toolOf(event: Record<string, unknown>): PayloadHead {
  return typeof event.tool_name === "string" ? { tool: event.tool_name } : {};
}

/**
 * An allowed result that must still block: a payload cut for depth while a
 * closed hook applied, or `--strict` with a failed hook or a skipped folder.
 */
function failClosed(
  result: DispatchResult,
  hooks: readonly HookDefinition[],
  problems: readonly HookProblem[],
  cut: readonly string[],
  strict: boolean,
): DispatchResult {
  if (result.decision === "block") return result;
  const guard = cut.length > 0 ? closedGuard(hooks, result.event_type, undefined, strict) : null;
  if (guard !== null) {
    return blocked(
      result,
      guard.name,
      `the payload nests deeper than ${MAX_JSON_DEPTH} levels at ${
        cut[0]
      }; hook "${guard.name}" could not see all of it and fails closed`,
    );
  }
  return strict ? strictResult(result, problems) : result;
}
