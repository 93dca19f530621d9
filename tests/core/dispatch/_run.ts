/** Runs the dispatcher in-process over in-memory hooks and fake runtimes. */
import { dispatchEvent } from "../../../packages/core/dispatch/dispatch.ts";
import type { DispatchResult, HookRecord } from "../../../packages/core/dispatch/result.ts";
import type { HookDefinition } from "../../../packages/core/hook/types.ts";
import { type Policy, resolvePolicy } from "../../../packages/core/policy.ts";
import { createPromptRuntime } from "../../../packages/core/runtime/prompt.ts";
import { type HookEvent, parseEvent } from "../../../packages/core/schema/event.ts";
import { type Behaviour, fakeHook, type FakeRuntime, fakeRuntime } from "../../_helpers.ts";

/** What one dispatch produced, plus what the fake runtimes saw. */
export interface Run {
  result: DispatchResult;
  /** Fake runtime behind wasm and (when permitted) subprocess hooks. */
  runtime: FakeRuntime;
  /** Results of async hooks, delivered through `onAsyncResult`. */
  asyncResults: Array<{ record: HookRecord; event: HookEvent }>;
  /** Names of the hooks the runtime was asked to run, in call order. */
  called: string[];
}

/** Dispatches `event` to `hooks`; waits for async hooks before returning. */
export async function run(
  hooks: HookDefinition[],
  event: Record<string, unknown>,
  behaviours: Record<string, Behaviour> = {},
  policy: Partial<Policy> = {},
): Promise<Run> {
  const runtime = fakeRuntime(behaviours);
  const asyncResults: Run["asyncResults"] = [];
  const pending: Promise<unknown>[] = [];
  const result = await dispatchEvent(hooks, parseEvent(event), {
    runtimes: { wasm: runtime, subprocess: runtime, prompt: createPromptRuntime() },
    policy: resolvePolicy(policy),
    tenantId: "tenant-1",
    env: {},
    onAsyncResult: (record, event) => asyncResults.push({ record, event }),
    track: (p) => pending.push(p),
  });
  await Promise.all(pending);
  return { result, runtime, asyncResults, called: runtime.calls.map((c) => c.hook) };
}

/** Names of the hooks in the result, in order. */
export function names(result: DispatchResult): string[] {
  return result.hooks.map((h) => h.name);
}

/** The record of hook `name` in the result. */
export function recordOf(result: DispatchResult, name: string): HookRecord {
  const record = result.hooks.find((h) => h.name === name);
  if (!record) throw new Error(`no record for ${name} in ${JSON.stringify(names(result))}`);
  return record;
}

/** A shell call's event (`ls`), parsed. */
export const LS_EVENT: HookEvent = parseEvent({
  event_type: "pre-tool-call",
  session_id: "s",
  tool_name: "Bash",
  tool_input: { command: "ls" },
});

/** A hook of `frontmatter` whose plugin is the corpus's `loop_forever` (`corpusRuntime`). */
export function loopHook(frontmatter: Record<string, unknown> & { name: string }): HookDefinition {
  return fakeHook(frontmatter, {
    entry: { runtime: "wasm", format: "wasm", path: "/fake/loop_forever.wasm" },
  });
}
