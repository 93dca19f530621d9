/**
 * Worker entry of {@linkcode unpackApart} (and `parseUploadApart`,
 * `loadHookApart`): inflates and reads one uploaded archive, or reads an
 * uploaded folder's manifest, on its own thread, at a lower priority, and
 * answers its files (or hook) or the error it is refused with.
 *
 * @module
 */
import { ApiError } from "../../service/errors.ts";
import { unpackArchive } from "../../service/archive.ts";
import type { UnpackAnswer, UnpackJob } from "./unpack.ts";
import { uploadFiles } from "../../service/request.ts";
import { lowerThreadPriority } from "../../host-deno/thread_priority.ts";
import { loadHook } from "../../core/hook/discover.ts";
import { denoFs } from "../../host-deno/fs.ts";
import { hookProblems } from "./hook_problems.ts";

interface UnpackScope {
  postMessage(message: UnpackAnswer, transfer?: Transferable[]): void;
  onmessage: ((event: MessageEvent<UnpackJob>) => void) | null;
}

const scope = globalThis as unknown as UnpackScope;
const lowered = lowerThreadPriority().catch(() => false);

scope.onmessage = async ({ data: job }) => {
  await lowered;
  try {
    if (!(job instanceof Uint8Array) && "load" in job) {
      try {
        return scope.postMessage({ hook: await loadHook(denoFs, job.load, "tenant") });
      } catch (err) {
        const problems = hookProblems(err);
        if (problems === null) throw err;
        return scope.postMessage({ problems });
      }
    }
    const read = job instanceof Uint8Array ? await unpackArchive(job) : uploadFiles(job.json);
    // Each file its own buffer (a tar's entries may share one), moved rather than copied.
    const files = [...read].map(([path, bytes]) => [path, bytes.slice()] as [string, Uint8Array]);
    scope.postMessage({ files }, files.map(([, bytes]) => bytes.buffer as ArrayBuffer));
  } catch (err) {
    scope.postMessage({
      error: err instanceof ApiError
        ? { status: err.status, code: err.code, message: err.message, extra: err.extra }
        : { status: 400, code: "ARCHIVE_INVALID", message: String(err), extra: {} },
    });
  }
};
