/** `hookbox dispatch`: one event JSON on stdin, the result JSON on stdout. */
import { parseArgs } from "node:util";
import { parseOptions } from "./commands.ts";
import { parseEventObject } from "../core/schema/event.ts";
import type { DispatchResult } from "../core/dispatch/result.ts";
import type { ExecutorOptions } from "../deno/executor.ts";
import { EXIT, stdinOnce, UsageError } from "./_io.ts";
import { boundBuildTime } from "../compile/mod.ts";
import { AGENTS, isAgentName } from "../agents/adapters.ts";
import { blockedResult, readHead } from "../agents/unreadable.ts";
import { isHookboxError } from "../core/errors.ts";
import { normalizeEventType } from "../core/schema/event_types.ts";
import { agentDispatch } from "./_agent_dispatch.ts";
import { StdinTooLarge } from "./_io.ts";
import {
  brokenGuardResult,
  failureLines,
  guardOfUnreadable,
  lineOf,
  strictResult,
} from "./_fail_closed.ts";
import { buildMs, type DispatchFlags, executorFor } from "./_executor.ts";

/** Runs the command; returns the exit code. */
export async function dispatchCommand(
  args: string[],
  extra: ExecutorOptions = {},
): Promise<number> {
  const { values } = parseArgs({
    args,
    options: parseOptions("dispatch"),
    strict: true,
    allowPositionals: false,
  });
  // --remote is taken by main.ts before this command loads; what is left of it is a mistake.
  if (values["timeout-ms"] !== undefined) throw new UsageError("--timeout-ms needs --remote URL");
  // An agent waits for this call: building the hooks it finds must not hold it past its timeout.
  boundBuildTime(buildMs());
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
      // Whatever kept the hooks from answering, a fault of hookbox's own included.
      return await unreadableEvent(
        values,
        extra,
        lineOf(err),
        JSON.stringify({
          event_type: typeof event.event_type === "string" ? event.event_type : undefined,
          tool_name: typeof event.tool_name === "string" ? event.tool_name : undefined,
        }),
      );
    }
    const problems = await executor.problems(workDir);
    result = await brokenGuardResult(result, problems);
    if (values.strict) result = strictResult(result, problems);
    printResult(result);
    if (result.decision === "block") {
      console.error(result.reason ?? "blocked");
      return EXIT.block;
    }
    // Failed hooks and skipped hook folders are never silent; on a block stderr carries only the reason.
    for (const line of failureLines(result, problems)) console.error(line);
    return EXIT.allow;
  } finally {
    await executor.close();
  }
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
  const guard = await guardOfUnreadable(values, extra, type, head);
  if (guard === null) throw new UsageError(problem);
  const reason = `hookbox cannot evaluate this event: ${problem}; hook "${guard}" ` +
    `guards it and fails closed`;
  printResult(blockedResult(type ?? "pre-tool-call", reason, guard));
  console.error(reason);
  return EXIT.block;
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
