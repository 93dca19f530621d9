/**
 * `hookbox dispatch --agent NAME`: the agent's hook stdin → its §1 event →
 * hooks → the agent's own answer. Fails closed at the boundary (SPEC §4.7):
 * a payload hookbox cannot read is the agent's block wherever a closed hook
 * could apply, and is never dropped silently; every failed or skipped hook
 * is one line on stderr and, where the agent shows one, in its user message.
 */
import type { ExecutorOptions } from "../adapters/deno/executor.ts";
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
import type { DispatchResult } from "../dispatch/result.ts";
import { isHookboxError } from "../errors.ts";
import type { HookDefinition } from "../hook/types.ts";
import type { HookProblem } from "../hook/discover.ts";
import { loadRe2 } from "../schema/_re2.ts";
import { MAX_JSON_DEPTH } from "../schema/depth.ts";
import { parseEventObject } from "../schema/event.ts";
import { stdinOnce, StdinTooLarge, UsageError } from "./_io.ts";
import { lastAnswer, stopCount } from "./_stop.ts";
import { type DispatchFlags, executorFor } from "./_executor.ts";
import { problemLine } from "./validate.ts";

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
  if (call.event.event_type === "pre-agent-turn-stop") await stopFacts(call);
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
      if (!isHookboxError(err)) throw err;
      const head = { event: call.agentEvent, ...toolOf(call.event) };
      return await unreadable(agent, values, extra, err.toLine(), head);
    }
    const problems = await executor.problems(workDir);
    const hooks = await executor.hooks(workDir);
    result = failClosed(result, hooks, problems, cut, values.strict === true);
    const lines = notices(result, problems);
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
 * could apply (or `--strict` and any hook could), else a failed hook call
 * (exit 1, one line on stderr), which is what it is.
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
  const dir = values["work-dir"] ?? (head.cwd?.startsWith("/") ? head.cwd : undefined);
  const { executor, workDir } = executorFor(dir ? { work_dir: dir } : {}, values, extra);
  try {
    const hooks = await executor.hooks(workDir);
    const problems = await executor.problems(workDir);
    await loadRe2();
    const strict = values.strict === true;
    const guard = closedGuard(hooks, type, head.tool, strict)?.name ??
      (strict && problems.length > 0 ? "hookbox" : await brokenClosedGuard(problems));
    if (guard === null) {
      return { exitCode: 1, stdout: "", stderr: `hookbox: ${problem}` };
    }
    const reason = `hookbox cannot evaluate this ${
      eventName ?? "event"
    }: ${problem}; hook "${guard}" guards it and fails closed`;
    return unreadableBlock(agent, eventName, reason, guard);
  } finally {
    await executor.close();
  }
}

/**
 * The stop gate's budget and message (`_stop.ts`): `stop_count` counted per
 * session across processes (Cursor sends its own `loop_count`), and the last
 * answer from the transcript where the payload lacks it (Copilot) or holds the
 * whole turn (Gemini's `prompt_response`).
 */
async function stopFacts(call: AgentCall): Promise<void> {
  const event = call.event!;
  if (call.agent !== "cursor") {
    const retry = call.input.stop_hook_active === true;
    event.stop_count = await stopCount(call.agent, String(event.session_id), retry);
  }
  if (call.agent === "copilot" || call.agent === "gemini-cli") {
    const said = await lastAnswer(call.input.transcriptPath ?? call.input.transcript_path)
      .catch(() => null);
    if (said !== null) event.last_message = said;
  }
}

/** The tool name of an event, for matching a guard's `matcher.tool`. */
function toolOf(event: Record<string, unknown>): PayloadHead {
  return typeof event.tool_name === "string" ? { tool: event.tool_name } : {};
}

/**
 * The name of a hook folder that could not load but whose HOOK.md says
 * `on_error: closed` (read as text: it did not parse): a broken closed guard
 * guards every event it might have guarded. Null when there is none.
 */
async function brokenClosedGuard(problems: readonly HookProblem[]): Promise<string | null> {
  for (const p of problems) {
    const file = p.path.endsWith("HOOK.md") ? p.path : `${p.path}/HOOK.md`;
    let text: string;
    try {
      text = await Deno.readTextFile(file);
    } catch {
      continue;
    }
    if (/^on_error:\s*["']?closed\b/m.test(text.slice(0, 64 * 1024))) {
      return file.split("/").at(-2) ?? p.path;
    }
  }
  return null;
}

/**
 * An allowed result that must still block: a payload cut for depth while a
 * closed hook applied, a broken closed guard, or `--strict` with a failed
 * hook or a skipped folder.
 */
function failClosed(
  result: DispatchResult,
  hooks: readonly HookDefinition[],
  problems: readonly HookProblem[],
  cut: readonly string[],
  strict: boolean,
): DispatchResult {
  if (result.decision === "block") return result;
  const block = (by: string, reason: string): DispatchResult => ({
    ...result,
    decision: "block",
    blocked_by: by,
    reason,
  });
  if (cut.length > 0) {
    const guard = closedGuard(hooks, result.event_type, undefined, strict);
    if (guard !== null) {
      return block(
        guard.name,
        `the payload nests deeper than ${MAX_JSON_DEPTH} levels at ${
          cut[0]
        }; hook "${guard.name}" could not see all of it and fails closed`,
      );
    }
  }
  if (!strict) return result;
  const failed = result.hooks.find((h) => FAILED.has(h.outcome));
  if (failed) {
    return block(
      failed.name,
      `hook "${failed.name}" failed (${failed.outcome}: ${
        failed.detail ?? "unknown"
      }) and hookbox runs --strict`,
    );
  }
  if (problems.length > 0) {
    return block("hookbox", `${problemLine(problems[0]!)} (hookbox runs --strict)`);
  }
  return result;
}

const FAILED = new Set(["error", "timeout", "limit", "skipped"]);

/** One line per failed hook and per skipped folder. */
function notices(result: DispatchResult, problems: readonly HookProblem[]): string[] {
  const lines = result.hooks.filter((h) => FAILED.has(h.outcome)).map((h) =>
    `hookbox: hook "${h.name}" (${h.level}) ${h.outcome}: ${h.detail ?? "no detail"}`
  );
  for (const p of problems) lines.push(`hookbox: skipped ${problemLine(p)}`);
  return lines;
}
