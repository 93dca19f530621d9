/**
 * Worker entry of the upload plugin check ({@linkcode checkPluginApart}):
 * instruments and compiles one plugin exactly as the runtime would, on its
 * own thread at a lower priority, and answers `null` or the coded error.
 *
 * @module
 */
import { isHookboxError } from "../../core/errors.ts";
import { messageOf } from "../../core/runtime/failure.ts";
import { checkPlugin } from "../../runtime-wasm/mod.ts";
import type { CheckAnswer, CheckJob } from "./plugin_check.ts";
import { lowerThreadPriority } from "../../host-deno/thread_priority.ts";
import { shareTypeBudget } from "../../rewriter/mod.ts";

interface CheckScope {
  postMessage(message: CheckAnswer): void;
  onmessage: ((event: MessageEvent<CheckJob & { types?: ArrayBufferLike }>) => void) | null;
}

const scope = globalThis as unknown as CheckScope;
const lowered = lowerThreadPriority().catch(() => false);

scope.onmessage = async ({ data: job }) => {
  await lowered;
  if (job.types !== undefined) shareTypeBudget(job.types);
  try {
    await checkPlugin(job.bytes, { limits: job.limits, path: job.path });
    scope.postMessage({ error: null });
  } catch (err) {
    scope.postMessage({
      error: isHookboxError(err)
        ? { code: err.code, message: err.message, path: err.path, field: err.field }
        : { code: "PLUGIN_INVALID", message: messageOf(err) },
    });
  }
};
