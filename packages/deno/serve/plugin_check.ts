/**
 * The upload plugin check off the request thread. Instrumenting and compiling
 * a plugin takes the thread that runs it about 70 ms per MB (a 4 MiB plugin,
 * the default cap, over 250 ms), and in the service an upload arrives on the
 * thread that answers every tenant's events: a tenant uploading big plugins
 * one after another would hold everyone's dispatches. Each check runs in a
 * worker of its own, at the priority of the plugin workers, and is stopped
 * after a deadline.
 *
 * @module
 */
import { type ErrorCode, HookboxError } from "../../core/errors.ts";
import type { EffectiveLimits } from "../../core/runtime/types.ts";

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
  const worker = new Worker(ENTRY, { type: "module" });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const answer = await new Promise<CheckAnswer>((resolve, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new HookboxError(
              "COMPILE_FAILED",
              `the plugin check did not finish in ${timeoutMs} ms`,
              {
                ...(job.path ? { path: job.path } : {}),
              },
            ),
          ),
        timeoutMs,
      );
      worker.onmessage = (event: MessageEvent<CheckAnswer>) => resolve(event.data);
      worker.onerror = (event) => {
        event.preventDefault();
        reject(new Error(`the plugin check failed: ${event.message}`));
      };
      worker.onmessageerror = () => reject(new Error("the plugin check sent a bad answer"));
      worker.postMessage(job);
    });
    if (answer.error !== null) {
      const { code, message, path, field } = answer.error;
      throw new HookboxError(code, message, {
        ...(path ? { path } : {}),
        ...(field ? { field } : {}),
      });
    }
  } finally {
    clearTimeout(timer);
    worker.terminate();
  }
}
