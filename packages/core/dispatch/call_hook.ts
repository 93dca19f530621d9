/**
 * Runs one hook through its runtime and reads its answer by the exit-code /
 * stdout / stderr protocol (SPEC §3).
 *
 * @module
 */
import type { HookDefinition } from "../hook/types.ts";
import { effectiveLimits, grantedHosts, type Policy } from "../policy.ts";
import { type FailureCode, messageOf, type RunFailure, runFailure } from "../runtime/failure.ts";
import type { EffectiveLimits, RunResult, Runtime, RuntimeKind } from "../runtime/types.ts";
import type { HookEvent } from "../schema/event.ts";
import { type Control, mayBeControl, readStdout } from "../schema/output.ts";
import { loadZod, zodLoaded } from "../schema/_zod.ts";
import { stringifyLazy } from "../schema/lazy_json.ts";
import { hasKind, inputField } from "./fields.ts";
import type { HookRecord, Outcome } from "./result.ts";
import { after } from "../timer.ts";

/** What the dispatcher needs to run hooks. */
export interface CallContext {
  runtimes: Partial<Record<RuntimeKind, Runtime>>;
  policy: Policy;
  tenantId: string;
  /** Extra `HOOKBOX_*` variables (subprocess hooks see them; wasm hooks only when granted). */
  env: Record<string, string>;
  signal?: AbortSignal;
  /** Fuel left in the event's budget (`Policy.eventFuel`): caps this hook's fuel. */
  fuelLeft?: number;
  /** When the event's time runs out (`Policy.eventTimeoutMs`), `performance.now()` ms. */
  deadline?: number;
  /** Output left in the event's budget (`Policy.eventOutputKb`), bytes: caps this hook's output. */
  outputLeft?: number;
  /**
   * The event's input budget (`Policy.eventInputKb`), bytes left, shared by
   * every hook of the event (async ones too): each call takes what it is
   * handed, and a call it cannot pay for does not run.
   */
  inputBudget?: { left: number };
}

/** One hook's record plus the control fields it printed (exit 0 only). */
export interface HookCall {
  record: HookRecord;
  control: Control | null;
}

const encoder = new TextEncoder();
/** Extra wall time the dispatcher grants a runtime before giving up on it. */
const GRACE_MS = 1000;

/** Largest encoded event kept in a reused buffer, bytes; bigger ones get their own. */
const KEPT_INPUT = 64 * 1024;
/** Reused buffers kept (one per call in flight at once). */
const KEPT_INPUTS = 8;

/**
 * Buffers events are encoded into for runtimes that borrow their input
 * (`Runtime.borrowsInput`): a new array per call is an off-heap allocation
 * that costs about a microsecond, more than encoding the event.
 */
class InputBuffers {
  #spare: Uint8Array[] = [];

  /** A buffer for a string of `length` UTF-16 units, or null when it may not fit one. */
  take(length: number): Uint8Array | null {
    if (length * 3 > KEPT_INPUT) return null; // UTF-8: at most 3 bytes per UTF-16 unit
    return this.#spare.pop() ?? new Uint8Array(KEPT_INPUT);
  }

  give(buffer: Uint8Array): void {
    if (this.#spare.length < KEPT_INPUTS) this.#spare.push(buffer);
  }
}

const INPUTS = new InputBuffers();

/** `text` as UTF-8 in the front of `buffer` (which fits it: see `InputBuffers.take`). */
function encodeInto(text: string, buffer: Uint8Array): Uint8Array {
  return buffer.subarray(0, encoder.encodeInto(text, buffer).written);
}

/** Runs `hook` on `event`; never throws for the hook's own faults. */
export async function callHook(
  hook: HookDefinition,
  event: HookEvent,
  ctx: CallContext,
): Promise<HookCall> {
  // Set when the runtime starts the call: a hook refused before it ran took no time.
  let started = -1;
  // The limits the call ran under, once known: a limit's detail names it and its knob.
  let applied: EffectiveLimits | null = null;
  const finish = (
    outcome: Outcome,
    run: Partial<RunResult>,
    failure: RunFailure | null,
  ): HookCall => ({
    record: {
      name: hook.name,
      level: hook.level,
      runtime: hook.entry.runtime,
      outcome,
      exit_code: run.exitCode ?? null,
      duration_ms: started < 0 ? 0 : Math.round((performance.now() - started) * 1000) / 1000,
      stdout: run.stdout ?? "",
      stderr: run.stderr ?? "",
      code: failure?.code ?? null,
      detail: failure === null ? null : limitDetail(failure, applied) ?? failure.detail,
      fuel: run.fuel ?? 0,
    },
    control: null,
  });
  const fail = (run: Partial<RunResult>, code: FailureCode, message?: string): HookCall => {
    const failure = runFailure(code, message);
    return finish(failure.outcome, run, failure);
  };
  if (hook.entry.runtime === "subprocess" && !ctx.policy.allowSubprocess) {
    return fail({}, "SUBPROCESS_DENIED");
  }
  const runtime = ctx.runtimes[hook.entry.runtime];
  if (!runtime) return fail({}, "RUNTIME_MISSING", hook.entry.runtime);
  let limits = effectiveLimits(hook.manifest, ctx.policy);
  applied = limits;
  if (ctx.fuelLeft !== undefined && ctx.fuelLeft < limits.fuel) {
    if (ctx.fuelLeft < 1) return fail({}, "LIMIT_FUEL", "the event's fuel budget is spent");
    limits = { ...limits, fuel: Math.floor(ctx.fuelLeft) };
  }
  applied = limits;
  if (ctx.outputLeft !== undefined && ctx.outputLeft < limits.outputKb * 1024) {
    if (ctx.outputLeft < 1024) {
      return fail({}, "LIMIT_OUTPUT", "the event's output budget is spent");
    }
    limits = { ...limits, outputKb: Math.floor(ctx.outputLeft / 1024) };
  }
  applied = limits;
  if (ctx.deadline !== undefined && ctx.deadline <= performance.now()) {
    return fail({}, "TIMEOUT", "the event's time budget is spent");
  }
  const budget = ctx.inputBudget;
  if (budget !== undefined && budget.left <= 0) {
    return fail({}, "LIMIT_INPUT", "the event's input budget is spent");
  }
  // Big parts of the request still unread are copied as their text, not parsed (lazy_json.ts).
  const text = stringifyLazy(event);
  const buffer = runtime.borrowsInput && runtime.selfTimed ? INPUTS.take(text.length) : null;
  try {
    const input = buffer === null ? encoder.encode(text) : encodeInto(text, buffer);
    if (budget !== undefined) {
      // Taken synchronously, before any await (async hooks start together),
      // and whether or not the hook may run: the serialising is what it pays for.
      budget.left -= input.byteLength;
      if (budget.left < 0) return fail({}, "LIMIT_INPUT", "the event's input budget is spent");
    }
    if (input.byteLength > limits.inputKb * 1024) return fail({}, "LIMIT_INPUT");

    const prepared = await prepare(runtime, hook, limits, ctx.deadline);
    if (prepared) return finish(prepared.outcome, {}, prepared);
    // After preparing (which may compile): what is left of the event's time caps the call.
    if (ctx.deadline !== undefined) {
      const left = Math.floor(ctx.deadline - performance.now());
      if (left < 1) return fail({}, "TIMEOUT", "the event's time budget is spent");
      if (left < limits.timeoutMs) applied = limits = { ...limits, timeoutMs: left };
    }
    started = performance.now();
    const running = runtime.run({
      hook,
      input,
      env: envFor(hook, event, ctx),
      limits,
      tenantId: ctx.tenantId,
      allowedHosts: grantedHosts(hook, ctx.policy),
      started,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    const run = runtime.selfTimed
      ? await running.catch(hostFault)
      : await guarded(running, limits.timeoutMs + GRACE_MS);
    if (run.failure) return finish(run.failure.outcome, run, run.failure);
    // Runtimes that print no program's output (prompt hooks) are held to the cap here.
    const cap = limits.outputKb * 1024;
    if (run.stdout.length > cap || run.stderr.length > cap) {
      return fail({ ...run, stdout: "", stderr: "" }, "LIMIT_OUTPUT");
    }
    if (!zodLoaded() && mayBeControl(run.stdout)) await loadZod();
    return interpret(event, run, finish, fail);
  } finally {
    // A runtime that borrows the input reads it only until its run settles,
    // and a self-timed one has settled by now (no backstop timer returned early).
    if (buffer !== null) INPUTS.give(buffer);
  }
}

/**
 * A limit's detail with the limit itself and the setting that raises it, for
 * a failure that has no text of its own: `fuel: 200000000 instructions
 * (limits.fuel in HOOK.md, at most the policy's max_fuel)`.
 */
function limitDetail(failure: RunFailure, limits: EffectiveLimits | null): string | null {
  if (limits === null || failure.message !== null) return null;
  const said: Partial<Record<FailureCode, string>> = {
    LIMIT_FUEL:
      `${limits.fuel} instructions (limits.fuel in HOOK.md, at most the policy's max_fuel)`,
    LIMIT_MEMORY:
      `${limits.memoryMb} MiB (limits.memory_mb in HOOK.md, at most the policy's max_memory_mb)`,
    LIMIT_OUTPUT:
      `${limits.outputKb} KiB (limits.output_kb in HOOK.md, at most the policy's max_output_kb)`,
    LIMIT_INPUT: `${limits.inputKb} KiB of event (the policy's input_kb)`,
    LIMIT_MODULE: `${limits.moduleKb} KiB of module (the policy's module_kb)`,
    TIMEOUT: `${limits.timeoutMs} ms (timeout in HOOK.md, at most the policy's max_timeout_ms)`,
  };
  const text = said[failure.code];
  return text === undefined ? null : `${failure.detail}: ${text}`;
}

function interpret(
  event: HookEvent,
  run: RunResult,
  finish: (o: Outcome, r: Partial<RunResult>, f: RunFailure | null) => HookCall,
  fail: (r: Partial<RunResult>, code: FailureCode, message?: string) => HookCall,
): HookCall {
  if (run.exitCode === 2) return finish("block", run, null);
  if (run.exitCode !== 0) return fail(run, "EXIT_CODE", String(run.exitCode));
  const reading = readStdout(run.stdout);
  if (reading.kind === "text") {
    const call = finish("ok", run, null);
    if (reading.note !== undefined) call.record.detail = reading.note;
    return call;
  }
  if (reading.kind === "invalid") return fail(run, "OUTPUT_INVALID", reading.error.message);
  const { control } = reading;
  const field = inputField(event.event_type);
  if (
    control.modified_input !== undefined && field && !hasKind(control.modified_input, field.kind)
  ) {
    return fail(
      run,
      "OUTPUT_INVALID",
      `modified_input must be a JSON ${field.kind} (${field.name})`,
    );
  }
  const call = finish(control.decision === "block" ? "block" : "ok", run, null);
  call.control = control;
  return call;
}

function envFor(hook: HookDefinition, event: HookEvent, ctx: CallContext): Record<string, string> {
  const env: Record<string, string> = {
    ...ctx.env,
    HOOKBOX_EVENT: event.event_type,
    HOOKBOX_SESSION_ID: event.session_id,
    HOOKBOX_HOOK_NAME: hook.name,
    HOOKBOX_HOOK_DIR: hook.dir,
    HOOKBOX_TENANT_ID: ctx.tenantId,
  };
  if (event.work_dir) env.HOOKBOX_WORK_DIR = event.work_dir;
  if (typeof event.tool_name === "string") env.HOOKBOX_TOOL_NAME = event.tool_name;
  return env;
}

/** Not settled within a turn of the microtask queue (see {@linkcode prepare}). */
const PENDING = Symbol("pending");

/**
 * Runs the runtime's preparation, untimed by the hook's own limits; a failure
 * becomes the hook's record. With the event's `deadline`, a preparation still
 * under way when it passes (building a JS hook found in this call) ends the
 * hook as `TIMEOUT`, `on_error` applied; the build goes on, and a later call
 * uses it. The event's deadline covers building, so a call answers in it.
 */
async function prepare(
  runtime: Runtime,
  hook: HookDefinition,
  limits: EffectiveLimits,
  deadline: number | undefined,
): Promise<RunFailure | null> {
  try {
    const preparing = runtime.prepare?.(hook, limits);
    if (preparing === undefined) return null;
    if (deadline === undefined) return await preparing;
    // Prepared already (every call after the first): no timer.
    const settled = await Promise.race([preparing, Promise.resolve(PENDING)]);
    if (settled !== PENDING) return settled;
    let cancel = () => {};
    const late = new Promise<typeof PENDING>((resolve) => {
      cancel = after(Math.max(0, deadline - performance.now()), () => resolve(PENDING));
    });
    // What the build ends in after the deadline is for a later call to see.
    preparing.catch(() => {});
    const first = await Promise.race([preparing, late]).finally(cancel);
    if (first !== PENDING) return first;
    return runFailure(
      "TIMEOUT",
      "the event's time budget ran out while the hook was being built; a later call uses the build",
    );
  } catch (err) {
    return runFailure("HOST_FAULT", messageOf(err));
  }
}

/** A runtime that rejected: a host fault, reported as the hook's failure. */
function hostFault(err: unknown): RunResult {
  return {
    exitCode: null,
    stdout: "",
    stderr: "",
    failure: runFailure("HOST_FAULT", messageOf(err)),
  };
}

/** Backstop for a runtime that does not return in time: report a timeout. */
async function guarded(run: Promise<RunResult>, ms: number): Promise<RunResult> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<RunResult>((resolve) => {
    timer = setTimeout(
      () =>
        resolve({
          exitCode: null,
          stdout: "",
          stderr: "",
          failure: runFailure("TIMEOUT"),
        }),
      ms,
    );
  });
  try {
    return await Promise.race([run.catch(hostFault), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
