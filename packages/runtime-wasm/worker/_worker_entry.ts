/**
 * Entry of a runtime worker (worker mode): runs a {@linkcode WasmRuntime}
 * inside a Web Worker, so the main thread can terminate it when a call
 * overruns its deadline. Warm instances and compiled modules live here.
 * Extism HTTP is served by blocking on the main thread's fetch.
 *
 * @module
 */
import { runChain } from "../../core/dispatch/dispatch.ts";
import type { DispatchResult } from "../../core/dispatch/result.ts";
import { messageOf, runFailure } from "../../core/runtime/failure.ts";
import type { HookDefinition } from "../../core/hook/types.ts";
import type { RunResult } from "../../core/runtime/types.ts";
import { askHttp, type HttpAsk } from "../http/_http_wire.ts";
import { WasmRuntime } from "../_runtime.ts";
import { watchLongCalls } from "../_host.ts";
import { createPromptRuntime } from "../../core/runtime/prompt.ts";
import { eventOfText } from "../../agents/event_text.ts";
import { packBigTexts } from "../../core/schema/lazy_json.ts";
import type {
  ChainLink,
  ChainSpec,
  WorkerJob,
  WorkerMessage,
  WorkerTypes,
} from "./_worker_protocol.ts";
import { shareTypeBudget } from "../../rewriter/mod.ts";

interface WorkerScope {
  postMessage(message: WorkerMessage, transfer?: Transferable[]): void;
  onmessage: ((event: MessageEvent<WorkerJob | WorkerTypes>) => void) | null;
}

const scope = globalThis as unknown as WorkerScope;
// Under Deno, plugin threads yield to the thread that answers requests, and a
// thread whose call runs long drops below the other plugin threads until its
// job ends (host-deno/thread_priority.ts) — where it may raise itself back
// (root, CAP_SYS_NICE, RLIMIT_NICE): elsewhere it would stay low after one long
// call, so it is not lowered for them. Not awaited: jobs never wait for it.
let priority: typeof import("../../host-deno/thread_priority.ts") | null = null;
/** This thread is below the plugin workers' nice value (a long call ran). */
let demoted = false;
/** Raising it back was refused after all: it stays low. */
let stuck = false;
if ("Deno" in globalThis) {
  import("../../host-deno/thread_priority.ts").then((m) => {
    // One step below, then back: tells whether this thread may raise its priority.
    if (!m.setThreadNice(m.PLUGIN_THREAD_NICE + 1)) return;
    if (!m.setThreadNice(m.PLUGIN_THREAD_NICE)) return;
    priority = m;
    watchLongCalls({
      afterMs: m.LONG_CALL_MS,
      onLong: () => {
        if (!demoted) demoted = m.setThreadNice(m.LONG_CALL_NICE);
      },
    });
  }).catch(() => {});
}

/** After a job: back to the plugin workers' nice value if a long call lowered it. */
function undemote(): void {
  if (!demoted || stuck || priority === null) return;
  if (priority.setThreadNice(priority.PLUGIN_THREAD_NICE)) demoted = false;
  else stuck = true;
}
const hooks = new Map<number, HookDefinition>();
const bytesOf = new WeakMap<HookDefinition, Uint8Array>();

/** This worker's runtime: made with its share of `warmBytes` (the first message). */
let runtime: WasmRuntime | undefined;
const runtimeOf = (warmBytes?: number, shareOf?: number): WasmRuntime =>
  runtime ??= new WasmRuntime({
    loadBytes: (hook) => {
      const bytes = bytesOf.get(hook);
      return bytes
        ? Promise.resolve(bytes)
        : Promise.reject(new Error("plugin bytes were not sent"));
    },
    httpTransport: (call, maxBytes, timeoutMs) =>
      askHttp((ask: HttpAsk) => scope.postMessage(ask), call, maxBytes, timeoutMs),
    ...(warmBytes === undefined ? {} : { warmBytes }),
    ...(shareOf === undefined ? {} : { shareOf }),
  });

async function handle(job: WorkerJob): Promise<RunResult | DispatchResult[]> {
  for (const key of job.forget) hooks.delete(key);
  if (job.chains !== undefined) {
    const answers: DispatchResult[] = [];
    for (const spec of job.chains) answers.push(await chain(job.tenantId, spec));
    return answers;
  }
  const hook = known(job);
  // Loading is the host's cost: done before the call's clock starts.
  const failure = await runtimeOf().prepare(hook, job.limits);
  if (failure !== null) return { exitCode: null, stdout: "", stderr: "", failure };
  if (job.type === "prepare") return { exitCode: 0, stdout: "", stderr: "" };
  if (job.announce) scope.postMessage({ type: "started", id: job.id });
  const { input, env, limits, tenantId } = job;
  const allowedHosts = job.allowedHosts ?? [];
  return await runtimeOf().run({ hook, input, env, limits, tenantId, allowedHosts });
}

/** The hook a job or chain link names, remembering its definition and bytes when sent. */
function known(link: ChainLink): HookDefinition {
  if (link.hook !== undefined) {
    hooks.set(link.key, link.hook);
    if (link.bytes !== undefined) bytesOf.set(link.hook, link.bytes);
  }
  const hook = hooks.get(link.key);
  if (hook === undefined) throw new Error(`hook ${link.key} is unknown to the worker`);
  return hook;
}

/** Runs a whole synchronous chain here: one message per event (or fewer), not one per hook. */
async function chain(tenantId: string, spec: ChainSpec): Promise<DispatchResult> {
  const defs = spec.links.map(known);
  const { policy, env } = spec;
  const event = spec.event ?? eventOfText(spec.eventText!);
  // The event's time left when the chain was sent (`Policy.eventTimeoutMs`), on this clock.
  const timeLeft = policy.eventTimeoutMs;
  return await runChain(defs, event, {
    runtimes: { wasm: runtimeOf(), prompt: PROMPTS },
    policy,
    tenantId,
    env,
    ...(timeLeft === undefined ? {} : { deadline: performance.now() + timeLeft }),
  });
}

const NO_RUN: RunResult = { exitCode: 0, stdout: "", stderr: "" };
/** Prompt hooks in a chain: nothing runs, their body is their answer. */
const PROMPTS = createPromptRuntime();

/** Printed characters past which packing an answer is bulk work, done below the other workers. */
const BULK_PRINTED_CHARS = 1024 * 1024;

/** Lowers this thread for packing `results` when their hooks printed megabytes. */
function demoteForBulk(results: readonly DispatchResult[]): void {
  if (demoted || priority === null) return;
  let chars = 0;
  for (const r of results) for (const h of r.hooks) chars += h.stdout.length + h.stderr.length;
  if (chars >= BULK_PRINTED_CHARS) demoted = priority.setThreadNice(priority.LONG_CALL_NICE);
}

/** Most often this worker tells the main thread what its runtime holds, ms. */
const STATS_EVERY_MS = 1000;
let statsDue: ReturnType<typeof setTimeout> | undefined;

/**
 * After a job: what the runtime holds goes to the main thread (`WorkerRuntime.stats`) within
 * {@linkcode STATS_EVERY_MS}, one message for however many jobs end meanwhile. It changes only
 * while jobs run, so the last report after the last job stands.
 */
function reportStats(): void {
  statsDue ??= setTimeout(() => {
    statsDue = undefined;
    if (runtime !== undefined) scope.postMessage({ type: "stats", stats: runtime.stats() });
  }, STATS_EVERY_MS);
}

scope.onmessage = (event) => {
  const job = event.data;
  if (job.type === "types") {
    shareTypeBudget(job.buffer);
    return void runtimeOf(job.warmBytes, job.shareOf);
  }
  handle(job).finally(undemote).finally(reportStats).then(
    (result) => {
      if (!Array.isArray(result)) return scope.postMessage({ type: "result", id: job.id, result });
      // Escaping megabytes of a tenant's output is its own cost, not other tenants' hooks';
      // raised back before the result goes, as after a long call.
      demoteForBulk(result);
      let packed: ReturnType<typeof packBigTexts>;
      try {
        // Big hook output crosses as bytes, moved rather than copied (lazy_json.ts).
        packed = packBigTexts(result);
      } finally {
        undemote();
      }
      const { texts, transfer } = packed;
      if (texts.length === 0) {
        return scope.postMessage({ type: "result", id: job.id, result: NO_RUN, chains: result });
      }
      scope.postMessage(
        { type: "result", id: job.id, result: NO_RUN, chains: result, texts },
        transfer,
      );
    },
    (err: unknown) => {
      const failure = runFailure("WORKER_FAILED", messageOf(err));
      scope.postMessage({
        type: "result",
        id: job.id,
        result: { exitCode: null, stdout: "", stderr: "", failure },
      });
    },
  );
};
scope.postMessage({ type: "ready" });
