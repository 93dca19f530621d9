/** `hookbox dispatch`: one event JSON on stdin, the result JSON on stdout. */
import { parseArgs } from "node:util";
import { absolute } from "../adapters/deno/fs.ts";
import { parseEventObject } from "../schema/event.ts";
import type { DispatchResult } from "../dispatch/result.ts";
import type { ExecutorOptions } from "../adapters/deno/executor.ts";
import { createExecutor } from "../adapters/deno/executor.ts";
import { EXIT, stdinOnce, UsageError } from "./_io.ts";
import {
  type AgentAnswer,
  agentAnswer,
  agentCall,
  type AgentName,
  AGENTS,
  isAgentName,
  passThrough,
} from "../agents/adapters.ts";
import { problemLine } from "./validate.ts";

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
  const event = parseStdinEvent(await stdinOnce());
  if (values.event !== undefined) event.event_type = values.event;
  const { executor, workDir } = executorFor(event, values, extra);
  try {
    const result = await executor.dispatch(event, values.tenant ? { tenantId: values.tenant } : {});
    printResult(result);
    if (result.decision === "block") {
      console.error(result.reason ?? "blocked");
      return EXIT.block;
    }
    // Skipped hook folders are never silent; on a block stderr carries only the reason.
    for (const p of await executor.problems(workDir)) {
      console.error(`hookbox: warning: ${problemLine(p)}`);
    }
    return EXIT.allow;
  } finally {
    await executor.close();
  }
}

/** The flags that shape the executor of one `dispatch`. */
interface DispatchFlags {
  "work-dir"?: string | undefined;
  "allow-subprocess"?: boolean | undefined;
  "hooks-dir"?: string[] | undefined;
  tenant?: string | undefined;
}

/**
 * The executor for `event`: its work dir is `--work-dir`, else the event's,
 * else the current directory (written back into the event).
 */
function executorFor(
  event: Record<string, unknown>,
  values: DispatchFlags,
  extra: ExecutorOptions,
): { executor: ReturnType<typeof createExecutor>; workDir: string } {
  const workDir = absolute(
    values["work-dir"] ?? (typeof event.work_dir === "string" ? event.work_dir : Deno.cwd()),
  );
  event.work_dir = workDir;
  const executor = createExecutor({
    // One process per event: discovery is remembered on disk between them.
    scanCache: true,
    // Run with V8's baseline compiler only (dist/cli/hookbox): nothing is tiered up.
    tuneWasmTiering: false,
    // One event per process: a warm instance would never be called again.
    warmBytes: 0,
    ...extra,
    platformDirs: values["hooks-dir"] ?? [],
    workDir,
    allowSubprocess: values["allow-subprocess"] ?? false,
  });
  return { executor, workDir };
}

/**
 * `--agent NAME`: the agent's hook stdin → its §1 event → hooks → the agent's
 * own answer (exit code, one JSON object or nothing on stdout, stderr).
 */
async function agentDispatch(
  agent: AgentName,
  values: DispatchFlags & { event?: string | undefined },
  extra: ExecutorOptions,
): Promise<number> {
  const text = await stdinOnce();
  if (text.trim() === "") throw new UsageError("no hook input JSON on stdin");
  const call = agentCall(agent, parseEventObject(text), values.event);
  let answer: AgentAnswer;
  if (call.event === null) {
    answer = passThrough(call);
  } else {
    const { executor } = executorFor(call.event, values, extra);
    try {
      const result = await executor.dispatch(
        call.event,
        values.tenant ? { tenantId: values.tenant } : {},
      );
      answer = agentAnswer(call, result);
    } finally {
      await executor.close();
    }
  }
  if (answer.stdout) console.log(answer.stdout);
  if (answer.stderr) console.error(answer.stderr);
  return answer.exitCode;
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
