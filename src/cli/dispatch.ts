/** `hookbox dispatch`: one event JSON on stdin, the result JSON on stdout. */
import { parseArgs } from "node:util";
import { parseEventObject } from "../schema/event.ts";
import type { DispatchResult } from "../dispatch/result.ts";
import type { ExecutorOptions } from "../adapters/deno/executor.ts";
import { EXIT, stdinOnce, UsageError } from "./_io.ts";
import { AGENTS, isAgentName } from "../agents/adapters.ts";
import { blockedResult, closedGuard, readHead } from "../agents/unreadable.ts";
import { isHookboxError } from "../errors.ts";
import { loadRe2 } from "../schema/_re2.ts";
import { normalizeEventType } from "../schema/event_types.ts";
import { agentDispatch } from "./_agent_dispatch.ts";
import { StdinTooLarge } from "./_io.ts";
import { problemLine } from "./validate.ts";
import { type DispatchFlags, executorFor } from "./_executor.ts";

/** Runs the command; returns the exit code. */
export async function dispatchCommand(
  args: string[],
  extra: ExecutorOptions = {},
): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      event: { type: "string" },
      "work-dir": { type: "string" },
      "allow-subprocess": { type: "boolean", default: false },
      "hooks-dir": { type: "string", multiple: true, default: [] },
      tenant: { type: "string" },
      agent: { type: "string" },
      strict: { type: "boolean", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.agent !== undefined) {
    if (!isAgentName(values.agent)) {
      throw new UsageError(`unknown agent "${values.agent}"; one of ${AGENTS.join(", ")}`);
    }
    return await agentDispatch(values.agent, values, extra);
  }
  let event: Record<string, unknown>;
  try {
    event = parseStdinEvent(await stdinOnce());
  } catch (err) {
    if (!isHookboxError(err)) throw err;
    const head = err instanceof StdinTooLarge ? err.head : await stdinOnce().catch(() => "");
    return await unreadableEvent(values, extra, err.toLine(), head);
  }
  if (values.event !== undefined) event.event_type = values.event;
  const { executor, workDir } = executorFor(event, values, extra);
  try {
    let result: DispatchResult;
    try {
      result = await executor.dispatch(event, values.tenant ? { tenantId: values.tenant } : {});
    } catch (err) {
      if (!isHookboxError(err)) throw err;
      return await unreadableEvent(
        values,
        extra,
        err.toLine(),
        JSON.stringify({
          event_type: typeof event.event_type === "string" ? event.event_type : undefined,
          tool_name: typeof event.tool_name === "string" ? event.tool_name : undefined,
        }),
      );
    }
    const problems = await executor.problems(workDir);
    if (values.strict && result.decision === "allow") result = strictResult(result, problems);
    printResult(result);
    if (result.decision === "block") {
      console.error(result.reason ?? "blocked");
      return EXIT.block;
    }
    // Failed hooks and skipped hook folders are never silent; on a block stderr carries only the reason.
    for (const h of result.hooks) {
      if (FAILED.has(h.outcome)) {
        console.error(`hookbox: hook "${h.name}" (${h.level}) ${h.outcome}: ${h.detail ?? ""}`);
      }
    }
    for (const p of problems) console.error(`hookbox: warning: ${problemLine(p)}`);
    return EXIT.allow;
  } finally {
    await executor.close();
  }
}

const FAILED = new Set(["error", "timeout", "limit", "skipped"]);

/** Under `--strict`, a failed hook or a skipped folder blocks. */
function strictResult(
  result: DispatchResult,
  problems: readonly { code: string; path: string; message: string }[],
): DispatchResult {
  const failed = result.hooks.find((h) => FAILED.has(h.outcome));
  const reason = failed
    ? `hook "${failed.name}" failed (${failed.outcome}: ${failed.detail ?? "unknown"})`
    : problems[0]
    ? `${problems[0].code} ${problems[0].path}: ${problems[0].message}`
    : null;
  if (reason === null) return result;
  return {
    ...result,
    decision: "block",
    blocked_by: failed?.name ?? "hookbox",
    reason: `${reason} and hookbox runs --strict`,
  };
}

/**
 * An event hookbox cannot evaluate (SPEC §4.7): a block (exit 2, the result
 * printed) when a closed hook could apply, else exit 1 with one line.
 */
async function unreadableEvent(
  values: DispatchFlags & { event?: string | undefined; strict?: boolean | undefined },
  extra: ExecutorOptions,
  problem: string,
  text: string,
): Promise<number> {
  const head = readHead(text);
  const type = normalizeEventType(values.event ?? head.event ?? "");
  const dir = values["work-dir"] ?? (head.cwd?.startsWith("/") ? head.cwd : undefined);
  const { executor, workDir } = executorFor(dir ? { work_dir: dir } : {}, values, extra);
  try {
    const hooks = await executor.hooks(workDir);
    await loadRe2();
    const guard = closedGuard(hooks, type, head.tool, values.strict === true);
    if (guard === null) throw new UsageError(problem);
    const reason = `hookbox cannot evaluate this event: ${problem}; hook "${guard.name}" ` +
      `guards it and fails closed`;
    printResult(blockedResult(type ?? "pre-tool-call", reason, guard.name));
    console.error(reason);
    return EXIT.block;
  } finally {
    await executor.close();
  }
}

/**
 * Prints the result JSON. The exit code follows the decision whatever happens
 * here: a result that cannot be printed in full (a value too deep or too big
 * to serialise) is printed as its decision alone, with the reason it was cut.
 */
function printResult(result: DispatchResult): void {
  let text: string;
  try {
    text = JSON.stringify(result, null, 2);
  } catch (err) {
    const { event_type, decision, reason, blocked_by } = result;
    const error = `result could not be printed in full: ${(err as Error).message}`;
    text = JSON.stringify({ event_type, decision, reason, blocked_by, error }, null, 2);
  }
  console.log(text);
}

function parseStdinEvent(text: string): Record<string, unknown> {
  if (text.trim() === "") throw new UsageError("no event JSON on stdin");
  return parseEventObject(text);
}
