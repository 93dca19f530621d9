/**
 * The dispatch chain (SPEC §4): select, order, run synchronous hooks one after
 * another with chained modifications, stop at the first block, start async
 * hooks detached, fail open unless a hook says `on_error: closed`.
 *
 * @module
 */
import type { HookDefinition, HookLevel } from "../hook/types.ts";
import { grantedHosts } from "../policy.ts";
import type { Runtime } from "../runtime/types.ts";
import type { HookEvent } from "../schema/event.ts";
import { UNBLOCKABLE_EVENTS } from "../schema/event_types.ts";
import type { Control } from "../schema/output.ts";
import { type CallContext, callHook, type HookCall } from "./call_hook.ts";
import { inputField, outputField } from "./fields.ts";
import { allowResult, type DispatchResult, type HookRecord } from "./result.ts";
import { recheckRewrites } from "./recheck.ts";
import { selectHooks } from "./select.ts";
import { loadRe2, re2Loaded } from "../schema/_re2.ts";
import { matcherNeedsRegexEngine } from "../schema/matcher.ts";

/**
 * Receives each async hook's record when it finishes. It may return a
 * promise (the owner's `close()` waits for it); a throw or a rejection is
 * reported on the console and changes nothing else.
 */
export type AsyncResultHandler = (record: HookRecord, event: HookEvent) => unknown;

/** Dispatch options beyond the call context. */
export interface DispatchOptions extends CallContext {
  /** Receives each async hook's record when it finishes (see {@linkcode AsyncResultHandler}). */
  onAsyncResult?: AsyncResultHandler;
  /** Keeps track of detached async calls so the owner can wait for them. */
  track?: (pending: Promise<unknown>) => void;
  /**
   * Picks the hooks that fit an event, in dispatch order, for the chain and
   * for its re-checks. @default {@linkcode selectHooks} (the service decides
   * its tenants' costly matchers on another thread: `selectHooksApart`)
   */
  select?: HookSelector;
}

/** The hooks of `hooks` that fit `event`, in dispatch order. */
export type HookSelector = (
  hooks: readonly HookDefinition[],
  event: HookEvent,
) => HookDefinition[] | Promise<HookDefinition[]>;

const FAILURES = new Set(["error", "timeout", "limit", "skipped"]);

/** Dispatches one validated event to the given hooks. */
export async function dispatchEvent(
  hooks: readonly HookDefinition[],
  event: HookEvent,
  options: DispatchOptions,
): Promise<DispatchResult> {
  // The bundled CLI loads RE2 only for a matcher that needs it (`schema/_re2.ts`).
  // Nothing to check or await once it is loaded (always, outside the bundled CLI).
  if (!re2Loaded() && hooks.some((h) => matcherNeedsRegexEngine(h.manifest.matcher))) {
    await loadRe2();
  }
  // One deadline for the whole event, from before its hooks are selected (matchers take host
  // time too): the chain, its re-checks and its async hooks' share.
  const timeLimit = options.policy.eventTimeoutMs;
  if (timeLimit !== undefined && options.deadline === undefined) {
    options = { ...options, deadline: performance.now() + timeLimit };
  }
  const select = options.select ?? selectHooks;
  // Awaited only when it is a promise: the default answers at once, on every dispatch.
  const picked = select(hooks, event);
  const selected = picked instanceof Promise ? await picked : picked;
  // Re-checks draw on what is left of the event's fuel budget, not a budget of their own.
  const recheck = (result: DispatchResult, shared: DispatchOptions) =>
    recheckRewrites(hooks, event, result, select, (some, changed) => {
      const budget = shared.policy.eventFuel;
      if (budget === undefined) return chainOf(some, changed, shared);
      const spent = result.hooks.reduce((n, h) => n + h.fuel, 0);
      const eventFuel = Math.max(1, budget - spent);
      return chainOf(some, changed, { ...shared, policy: { ...shared.policy, eventFuel } });
    });
  // No async hook (the common case): the chain's records are the result's.
  if (!selected.some((h) => h.manifest.async)) {
    return await recheck(await chainOf(selected, event, options), options);
  }
  // Async and synchronous hooks draw on one input budget.
  const shared = {
    ...options,
    inputBudget: options.inputBudget ?? { left: options.policy.eventInputKb * 1024 },
  };
  const records = new Map<HookDefinition, HookRecord>();
  for (const hook of selected.filter((h) => h.manifest.async)) {
    records.set(hook, startAsync(hook, event, shared));
  }
  const sync = selected.filter((h) => !h.manifest.async);
  const result = await chainOf(sync, event, shared);
  // The chain's records are those of the hooks that ran, in order.
  result.hooks.forEach((record, i) => records.set(sync[i]!, record));
  result.hooks = selected.flatMap((h) => records.get(h) ?? []);
  return await recheck(result, shared);
}

/**
 * Runs the synchronous hooks one after another (SPEC §4): each sees the
 * modifications and store of those before it, the first block stops the chain.
 * The result's `hooks` are the records of the hooks that ran, in order.
 */
export async function runChain(
  hooks: readonly HookDefinition[],
  event: HookEvent,
  context: CallContext,
): Promise<DispatchResult> {
  const result = emptyResult(event);
  // Each hook sees the store as the hooks before it left it: the result's own
  // object, not a copy per hook (copying a store of 300,000 keys for each of
  // a thousand hooks held the host for minutes). A hook's event is serialised
  // when it is called, so later changes never reach an earlier hook.
  let current: HookEvent = { ...event, store: result.store };
  // Tool names are folded in sets for the whole chain (arrays searched, or
  // sets rebuilt, per name or per hook are quadratic) and listed once at the end.
  const tools: ToolSets = { disabled: new Map(), enabled: new Set() };
  let fuelLeft = context.policy.eventFuel;
  let outputLeft = context.policy.eventOutputKb * 1024;
  const inputBudget = context.inputBudget ?? { left: context.policy.eventInputKb * 1024 };
  for (const hook of hooks) {
    const call = await callHook(hook, current, {
      ...context,
      outputLeft,
      inputBudget,
      ...(fuelLeft === undefined ? {} : { fuelLeft }),
    });
    if (fuelLeft !== undefined) fuelLeft -= call.record.fuel;
    outputLeft -= call.record.stdout.length + call.record.stderr.length;
    result.hooks.push(call.record);
    if (applyCall(result, hook, call, tools)) break;
    current = nextEvent(current, call.control, result);
  }
  result.disable_tools = [...tools.disabled.keys()];
  result.enable_tools = [...tools.enabled];
  return result;
}

/**
 * The tool names a chain's hooks disabled (with the authority of the level
 * that disabled each) and enabled so far.
 */
interface ToolSets {
  disabled: Map<string, number>;
  enabled: Set<string>;
}

/**
 * The chain, in one go when the WebAssembly runtime can run it at once
 * (worker mode: one worker message per event instead of one per hook).
 */
async function chainOf(
  hooks: readonly HookDefinition[],
  event: HookEvent,
  options: DispatchOptions,
): Promise<DispatchResult> {
  const runtime = options.runtimes.wasm;
  // Prompt hooks ride along: what a chain's hooks print is parsed where the
  // chain runs, and in a service that must not be the thread answering requests.
  const whole = runtime?.runChain !== undefined &&
    hooks.some((h) => h.entry.runtime === "wasm") &&
    hooks.every((h) =>
      h.entry.runtime === "prompt" ||
      (h.entry.runtime === "wasm" && grantedHosts(h, options.policy).length === 0)
    );
  if (!whole) return await runChain(hooks, event, options);
  const { runtimes: _, track: __, onAsyncResult: ___, deadline, ...context } = options;
  // A deadline is this thread's clock: the chain's own thread is told the time left instead.
  if (deadline !== undefined) {
    const left = Math.max(1, Math.floor(deadline - performance.now()));
    context.policy = { ...context.policy, eventTimeoutMs: left };
  }
  const answer = await runtime.runChain!({ hooks, event, ...context });
  if (answer === null) return await runChain(hooks, event, options);
  if ("result" in answer) return answer.result;
  // The chain could not finish as a whole (its worker was killed, the call was
  // aborted): every hook reports that failure, with on_error applied as usual.
  const failing: Runtime = {
    kind: "wasm",
    run: () => Promise.resolve({ exitCode: null, stdout: "", stderr: "", failure: answer.failure }),
  };
  // Prompt hooks in it answer as they would have (nothing of theirs ran on the worker).
  return await runChain(hooks, event, {
    ...options,
    runtimes: { ...options.runtimes, wasm: failing },
  });
}

/** Folds one call into the result; returns true when the chain must stop. */
function applyCall(
  result: DispatchResult,
  hook: HookDefinition,
  call: HookCall,
  tools: ToolSets,
): boolean {
  const { record, control } = call;
  if (control) mergeControl(result, control, record.outcome === "block", tools, hook.level);
  if (UNBLOCKABLE_EVENTS.has(result.event_type)) {
    if (record.outcome === "block") record.detail ??= `${result.event_type} cannot block`;
    return false;
  }
  if (record.outcome === "block") {
    const text = control?.reason ?? record.stderr.trim();
    return block(result, hook.name, text || `blocked by hook "${hook.name}"`);
  }
  if (FAILURES.has(record.outcome) && hook.manifest.on_error === "closed") {
    return block(
      result,
      hook.name,
      `hook "${hook.name}" failed (${record.outcome}: ${
        record.detail ?? "unknown"
      }) and is on_error: closed`,
    );
  }
  return false;
}

/**
 * How much say a level has over tools: 0 is the most. Platform hooks are the
 * operator's; a tenant's hooks stand where a project's do.
 */
export function toolAuthority(level: HookLevel): number {
  return level === "platform" ? 0 : level === "user" ? 1 : 2;
}

function block(result: DispatchResult, name: string, reason: string): true {
  result.decision = "block";
  result.reason = reason;
  result.blocked_by = name;
  return true;
}

function mergeControl(
  result: DispatchResult,
  control: Control,
  blocking: boolean,
  tools: ToolSets,
  level: HookLevel,
): void {
  if (control.store) Object.assign(result.store, control.store);
  if (control.inject) { for (const item of control.inject) result.inject.push(item); }
  const authority = toolAuthority(level);
  for (const tool of control.disable_tools ?? []) {
    // The strongest disable stands (a lower level disabling again takes nothing away).
    tools.disabled.set(tool, Math.min(tools.disabled.get(tool) ?? authority, authority));
    tools.enabled.delete(tool);
  }
  for (const tool of control.enable_tools ?? []) {
    // SPEC §4.6: a level never enables what a higher level disabled.
    const by = tools.disabled.get(tool);
    if (by !== undefined && by < authority) continue;
    tools.enabled.add(tool);
    tools.disabled.delete(tool);
  }
  if (blocking) return;
  if (control.modified_input !== undefined && inputField(result.event_type)) {
    result.modified_input = control.modified_input;
  }
  if (control.modified_output !== undefined && outputField(result.event_type)) {
    result.modified_output = control.modified_output;
  }
  if (control.reason !== undefined && result.reason === null) result.reason = control.reason;
}

/** The event the next hook sees: modified input/output and the shared store applied. */
function nextEvent(event: HookEvent, control: Control | null, result: DispatchResult): HookEvent {
  const next: HookEvent = { ...event, store: result.store };
  const input = inputField(event.event_type);
  if (input && control?.modified_input !== undefined) next[input.name] = control.modified_input;
  const output = outputField(event.event_type);
  if (output && control?.modified_output !== undefined) next[output] = control.modified_output;
  return next;
}

function startAsync(hook: HookDefinition, event: HookEvent, options: DispatchOptions): HookRecord {
  const pending = callHook(hook, event, options).then(
    (call) => options.onAsyncResult?.(call.record, event),
    () => {},
  ).catch((err) => {
    // The embedder's handler failed: reported, never an unhandled rejection (a crash in Deno).
    console.error(`hookbox: onAsyncResult failed for hook ${hook.name}:`, err);
  });
  options.track?.(pending);
  return {
    name: hook.name,
    level: hook.level,
    runtime: hook.entry.runtime,
    outcome: "async",
    exit_code: null,
    duration_ms: 0,
    stdout: "",
    stderr: "",
    code: null,
    detail: null,
    fuel: 0,
  };
}

function emptyResult(event: HookEvent): DispatchResult {
  return allowResult(event.event_type, { ...(event.store ?? {}) });
}
