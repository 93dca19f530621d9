/**
 * The upload plugin check off the request thread. Instrumenting and compiling
 * a plugin takes the thread that runs it about 70 ms per MB (a 4 MiB plugin,
 * the default cap, over 250 ms), and in the service an upload arrives on the
 * thread that answers every tenant's events: a tenant uploading big plugins
 * one after another would hold everyone's dispatches. Checks run on workers
 * of their own, at the priority of the plugin workers, kept between uploads
 * ({@linkcode WorkerPool}), and one that overruns its deadline is stopped.
 *
 * @module
 */
import { type ErrorCode, HookboxError } from "../../core/errors.ts";
import type { EffectiveLimits } from "../../core/runtime/types.ts";
import { WorkerPool } from "./worker_pool.ts";
import { typeBudgetBuffer } from "../../rewriter/mod.ts";

/** What the worker is asked. */
export interface CheckJob {
  bytes: Uint8Array;
  limits: Pick<EffectiveLimits, "memoryMb" | "moduleKb">;
  path: string | undefined;
}

/** What the worker answers: null when the plugin would load. */
export interface CheckAnswer {
  error:
    | { code: ErrorCode; message: string; path?: string | undefined; field?: string | undefined }
    | null;
}

/** Time one check may take. */
export const PLUGIN_CHECK_TIMEOUT_MS = 60_000;

const ENTRY = new URL("./_plugin_check_worker.ts", import.meta.url).href;

/**
 * Checks that `bytes` would load as a plugin under `limits` (size, imports,
 * features, instrumentation, compilation); throws the runtime's `HookboxError`
 * when it would not, or `COMPILE_FAILED` when the check overruns `timeoutMs`.
 */
export async function checkPluginApart(
  job: CheckJob,
  timeoutMs = PLUGIN_CHECK_TIMEOUT_MS,
): Promise<void> {
  // The types the plugin brings count on the process's one counter (rewriter `_type_budget.ts`).
  const sent: CheckJob & { types: ArrayBufferLike } = { ...job, types: typeBudgetBuffer() };
  const result = await POOL.run(sent, job.bytes.byteLength, timeoutMs);
  if (!result.ok) {
    if (result.failure.kind === "error") {
      throw new Error(`the plugin check failed: ${result.failure.message}`);
    }
    throw new HookboxError(
      "COMPILE_FAILED",
      `the plugin check did not finish in ${timeoutMs} ms`,
      job.path ? { path: job.path } : {},
    );
  }
  if (result.answer.error !== null) {
    const { code, message, path, field } = result.answer.error;
    throw new HookboxError(code, message, {
      ...(path ? { path } : {}),
      ...(field ? { field } : {}),
    });
  }
}

/** Two kept idle, as a server builds at most two uploads at once. */
const POOL = new WorkerPool<CheckJob, CheckAnswer>(ENTRY, {
  size: 2,
  recycleBytes: 256 * 1024 * 1024,
  idleMs: 5000,
});

/** The plugin check workers started so far (tests). */
export function pluginCheckWorkersStarted(): number {
  return POOL.started;
}
