/**
 * Worker entry of the upload plugin check ({@linkcode checkPluginApart}):
 * instruments and compiles one plugin exactly as the runtime would, on its
 * own thread at a lower priority, and answers `null` or the coded error.
 *
 * @module
 */
import { isHookboxError } from "../../errors.ts";
import { messageOf } from "../../runtime/failure.ts";
import { PromiseCache } from "../../runtime/wasm/_cache.ts";
import { prepare } from "../../runtime/wasm/_loader.ts";
import type { CheckAnswer, CheckJob } from "./plugin_check.ts";
import { lowerThreadPriority } from "./thread_priority.ts";

interface CheckScope {
  postMessage(message: CheckAnswer): void;
  onmessage: ((event: MessageEvent<CheckJob>) => void) | null;
}

const scope = globalThis as unknown as CheckScope;
const lowered = lowerThreadPriority().catch(() => false);

scope.onmessage = async ({ data: job }) => {
  await lowered;
  try {
    await prepare(job.bytes, {
      limits: job.limits,
      compile: (bytes) => WebAssembly.compile(bytes as Uint8Array<ArrayBuffer>),
      modules: new PromiseCache(1),
      path: job.path,
    });
    scope.postMessage({ error: null });
  } catch (err) {
    scope.postMessage({
      error: isHookboxError(err)
        ? { code: err.code, message: err.message, path: err.path, field: err.field }
        : { code: "PLUGIN_INVALID", message: messageOf(err) },
    });
  }
};
