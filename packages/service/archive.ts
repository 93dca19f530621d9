/**
 * Uploaded hook folders as gzip'd tars: inflated with the cap checked as the
 * output grows, then read as a tar whose files sit at its root or under one
 * folder; links and devices are refused. Web APIs only: the service runs it
 * in place, the Deno builder on a worker of its own (`HookBuilder.unpack`).
 *
 * @module
 */
import { parseTar } from "nanotar";
import { readCapped } from "../core/bytes.ts";
import { ApiError } from "./errors.ts";
import type { Problem } from "./builder.ts";
import { MAX_UPLOAD_FILES } from "../core/hook/files.ts";

/** Most bytes an uploaded archive may unpack to. */
export const MAX_UNPACKED_BYTES = 64 * 1024 * 1024;

/** The files of gzip'd tar `archive` (`ApiError`s for what is wrong with it). */
export async function unpackArchive(archive: Uint8Array): Promise<Map<string, Uint8Array>> {
  return untar(await gunzip(archive));
}

/**
 * Compressed bytes handed to the inflater at a time: it inflates a chunk whole
 * before the cap is looked at, and deflate expands at most ~1,032×, so a
 * 1 KiB slice unpacks to at most ~1 MiB past the cap (one 1 MiB gzip of 1 GiB
 * of zeros took 7 s inflated in one piece, 57 ms in slices).
 */
const INFLATE_SLICE = 1024;

/** Gunzips with a cap on the output (a small gzip can unpack to gigabytes). */
async function gunzip(bytes: Uint8Array): Promise<Uint8Array> {
  let at = 0;
  const slices = new ReadableStream<Uint8Array<ArrayBuffer>>({
    pull(controller) {
      if (at >= bytes.byteLength) return controller.close();
      controller.enqueue(bytes.slice(at, at += INFLATE_SLICE) as Uint8Array<ArrayBuffer>);
    },
  });
  const stream = slices.pipeThrough(new DecompressionStream("gzip"));
  let out: Uint8Array | null;
  try {
    out = await readCapped(stream, MAX_UNPACKED_BYTES);
  } catch {
    throw new ApiError(400, "ARCHIVE_INVALID", "body is not valid gzip data");
  }
  if (out === null) {
    throw new ApiError(
      413,
      "BODY_TOO_LARGE",
      `the tar unpacks to over ${MAX_UNPACKED_BYTES} bytes`,
    );
  }
  return out;
}

/** The problem of an uploaded folder of `count` files, past {@linkcode MAX_UPLOAD_FILES}. */
export function tooManyFilesProblem(count: number): Problem {
  const message = `a hook folder holds at most ${MAX_UPLOAD_FILES} files, got ${count}`;
  return { code: "HOOK_TOO_MANY", path: null, field: "files", message };
}

/**
 * The builder's refusal of an upload of too many files, given where the
 * files are read, so tens of thousands of them never reach the thread that
 * answers every tenant.
 */
export function tooManyFiles(count: number): ApiError {
  const problem = tooManyFilesProblem(count);
  return new ApiError(422, "HOOK_REJECTED", `the hook was rejected: ${problem.message}`, {
    problems: [problem],
  });
}

/** Tar entries that carry metadata only. */
const IGNORED_TAR_TYPES = new Set(["extendedHeader", "globalExtendedHeader"]);

/** The files of a tar, at its root or under one folder; links and devices are refused. */
function untar(bytes: Uint8Array): Map<string, Uint8Array> {
  let entries;
  try {
    entries = parseTar(bytes);
  } catch {
    throw new ApiError(400, "ARCHIVE_INVALID", "body is not a valid tar archive");
  }
  const files = new Map<string, Uint8Array>();
  for (const entry of entries) {
    const type = entry.type ?? "file";
    // nanotar applies pax and GNU long names itself: `name` is the whole path.
    const name = entry.name;
    if (type === "directory" || IGNORED_TAR_TYPES.has(type)) continue;
    if (type !== "file") {
      throw new ApiError(422, "HOOK_REJECTED", `tar entry "${name}" is a ${type}`, {
        problems: [{
          code: "HOOK_PATH_OUTSIDE",
          path: name,
          field: null,
          message: "only regular files may be uploaded",
        }],
      });
    }
    files.set(name.replace(/^\.\//, ""), entry.data ?? new Uint8Array(0));
  }
  if (files.size > MAX_UPLOAD_FILES) throw tooManyFiles(files.size);
  const tops = new Set([...files.keys()].map((p) => p.split("/")[0]));
  const [top] = tops;
  if (tops.size === 1 && top !== undefined && !files.has(top)) {
    return new Map([...files].map(([p, d]) => [p.slice(top.length + 1), d]));
  }
  return files;
}
