/**
 * Uploaded archives unpacked, and uploaded folders' manifests read, off the
 * thread that answers events: a gzip'd
 * tar inflates to at most 64 MiB, which still costs a thread tens of
 * milliseconds — on workers of their own, a hostile tenant's archives cost
 * other tenants' events nothing. The workers are kept between uploads
 * ({@linkcode WorkerPool}: starting one holds the starting thread ~10 ms);
 * one is ended after 256 MiB of uploads, so what big ones left goes with it,
 * or after 5 s without one.
 *
 * @module
 */
import type { ErrorCode } from "../../core/errors.ts";
import { ApiError, type ErrorStatus } from "../../service/errors.ts";
import { WorkerPool } from "./worker_pool.ts";
import type { HookDefinition } from "../../core/hook/types.ts";
import { HookRejected, type Problem } from "../../service/builder.ts";

/** What the worker is given: an archive, a JSON upload body, or an uploaded folder to read. */
export type UnpackJob = Uint8Array | { json: Uint8Array } | { load: string };

/** What the worker answers. */
export type UnpackAnswer =
  | { files: [string, Uint8Array][] }
  | { hook: HookDefinition }
  | { problems: Problem[] }
  | {
    error: {
      status: ErrorStatus;
      code: ErrorCode;
      message: string;
      extra: ConstructorParameters<typeof ApiError>[3];
    };
  };

const ENTRY = new URL("./_unpack_worker.ts", import.meta.url);

/** Longest an archive may take to unpack, ms. */
export const UNPACK_TIMEOUT_MS = 30_000;

/** `unpackArchive` on a worker of its own (see the module doc); `archive` is moved there. */
export function unpackApart(archive: Uint8Array): Promise<Map<string, Uint8Array>> {
  return apart(archive);
}

/** `uploadFiles` of a big JSON upload body on a worker of its own, as an archive is (moved). */
export function parseUploadApart(json: Uint8Array): Promise<Map<string, Uint8Array>> {
  return apart({ json });
}

/** Two kept idle, as the upload gate lets a tenant's uploads in two at a time. */
const POOL = new WorkerPool<UnpackJob, UnpackAnswer>(ENTRY, {
  size: 2,
  recycleBytes: 256 * 1024 * 1024,
  idleMs: 5000,
});

/**
 * `loadHook` of an uploaded folder written at `dir`, on the same workers:
 * parsing a manifest's YAML takes a thread tens of milliseconds for a 16
 * KiB frontmatter. Throws {@linkcode HookRejected} with what is wrong.
 */
export async function loadHookApart(dir: string): Promise<HookDefinition> {
  const result = await POOL.run({ load: dir }, 0, UNPACK_TIMEOUT_MS, []);
  if (!result.ok) {
    throw new HookRejected([{
      code: "HOOK_MANIFEST_INVALID",
      path: "HOOK.md",
      field: null,
      message: result.failure.kind === "timeout"
        ? `reading the hook folder took over ${UNPACK_TIMEOUT_MS} ms`
        : `the hook folder could not be read: ${result.failure.message}`,
    }]);
  }
  const answer = result.answer;
  if ("problems" in answer) throw new HookRejected(answer.problems);
  if ("error" in answer) throw apiError(answer.error);
  if (!("hook" in answer)) throw new Error("the unpacking worker answered files for a folder");
  return answer.hook;
}

function apiError(error: Extract<UnpackAnswer, { error: unknown }>["error"]): ApiError {
  return new ApiError(error.status, error.code, error.message, error.extra);
}

async function apart(job: Uint8Array | { json: Uint8Array }): Promise<Map<string, Uint8Array>> {
  const bytes = job instanceof Uint8Array ? job : job.json;
  // Moved, not copied (up to 16 MiB): the caller's view is left empty.
  const whole = bytes.byteOffset === 0 && bytes.buffer instanceof ArrayBuffer &&
    bytes.byteLength === bytes.buffer.byteLength;
  const size = bytes.byteLength;
  const result = await POOL.run(job, size, UNPACK_TIMEOUT_MS, whole ? [bytes.buffer] : []);
  if (!result.ok) {
    throw new ApiError(
      400,
      "ARCHIVE_INVALID",
      result.failure.kind === "timeout"
        ? `unpacking took over ${UNPACK_TIMEOUT_MS} ms`
        : `the archive could not be read: ${result.failure.message}`,
    );
  }
  const answer = result.answer;
  if ("error" in answer) throw apiError(answer.error);
  if (!("files" in answer)) throw new Error("the unpacking worker answered no files");
  return new Map(answer.files);
}

/** The unpacking workers started so far (tests). */
export function unpackWorkersStarted(): number {
  return POOL.started;
}
