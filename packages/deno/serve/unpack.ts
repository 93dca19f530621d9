/**
 * Uploaded archives unpacked off the thread that answers events: a gzip'd
 * tar inflates to at most 64 MiB, which still costs a thread tens of
 * milliseconds — on a worker of its own, a hostile tenant's archives cost
 * other tenants' events nothing. A worker per archive: its memory goes with it.
 *
 * @module
 */
import type { ErrorCode } from "../../core/errors.ts";
import { ApiError, type ErrorStatus } from "../../service/errors.ts";

/** What the worker is given: an archive, or a JSON upload body. */
export type UnpackJob = Uint8Array | { json: Uint8Array };

/** What the worker answers. */
export type UnpackAnswer =
  | { files: [string, Uint8Array][] }
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

/** `unpackArchive` on a worker of its own (see the module doc). */
export function unpackApart(archive: Uint8Array): Promise<Map<string, Uint8Array>> {
  return apart(archive);
}

/** `uploadFiles` of a big JSON upload body on a worker of its own, as an archive is. */
export function parseUploadApart(json: Uint8Array): Promise<Map<string, Uint8Array>> {
  return apart({ json });
}

async function apart(job: UnpackJob): Promise<Map<string, Uint8Array>> {
  const worker = new Worker(ENTRY, { type: "module" });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const answer = await new Promise<UnpackAnswer>((resolve, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new ApiError(400, "ARCHIVE_INVALID", `unpacking took over ${UNPACK_TIMEOUT_MS} ms`),
          ),
        UNPACK_TIMEOUT_MS,
      );
      worker.onmessage = (event: MessageEvent<UnpackAnswer>) => resolve(event.data);
      worker.onerror = (event) => {
        event.preventDefault();
        reject(
          new ApiError(400, "ARCHIVE_INVALID", `the archive could not be read: ${event.message}`),
        );
      };
      worker.onmessageerror = () => reject(new Error("the unpack worker sent a bad answer"));
      worker.postMessage(job);
    });
    if ("error" in answer) {
      const { status, code, message, extra } = answer.error;
      throw new ApiError(status, code, message, extra);
    }
    return new Map(answer.files);
  } finally {
    clearTimeout(timer);
    worker.terminate();
  }
}
