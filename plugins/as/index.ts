// deno-fmt-ignore-file -- AssemblyScript source.
// deno-lint-ignore-file no-namespace -- AssemblyScript: `input.text()` reads like the hook API it is.
/**
 * hookbox for AssemblyScript: the event in, stdout/stderr out, the exit code
 * is what the exported `hook` function returns.
 *
 * ```ts
 * import { input, stderr, ALLOW, BLOCK } from "hookbox";
 * export function hook(): i32 {
 *   if (input.text().includes("rm -rf /")) {
 *     stderr.write("rm -rf / is not allowed");
 *     return BLOCK;
 *   }
 *   return ALLOW;
 * }
 * ```
 */

import { fd_read } from "./wasi";
import { appendString, callState } from "./_state";

export { json } from "./json";

/** Exit code: allow (stdout, if JSON, carries control fields). */
export const ALLOW: i32 = 0;
/** Exit code: block (stderr is the reason shown to the agent). */
export const BLOCK: i32 = 2;

/** Reads fd 0 to its end (the event; the host caps its size). */
function readStdin(): Uint8Array {
  const iov = heap.alloc(16);
  let buffer = new Uint8Array(4096);
  let done = 0;
  for (;;) {
    if (done == buffer.length) {
      const grown = new Uint8Array(buffer.length << 1);
      memory.copy(grown.dataStart, buffer.dataStart, <usize>done);
      buffer = grown;
    }
    store<u32>(iov, <u32>(buffer.dataStart + <usize>done));
    store<u32>(iov, <u32>(buffer.length - done), 4);
    if (fd_read(0, iov, 1, iov + 8) != 0) break;
    const got = <i32>load<u32>(iov, 8);
    if (got == 0) break;
    done += got;
  }
  heap.free(iov);
  return done == buffer.length ? buffer : buffer.slice(0, done);
}

/** The event JSON handed to this call. */
export namespace input {
  /** The raw event bytes (read from the host once per call). */
  export function bytes(): Uint8Array {
    const cached = callState().input;
    if (cached !== null) return cached;
    const data = readStdin();
    callState().input = data;
    return data;
  }

  /** The event as a string (UTF-8 decoded). */
  export function text(): string {
    const data = bytes();
    return String.UTF8.decodeUnsafe(data.dataStart, <usize>data.length);
  }
}

/** Standard output: on exit 0, JSON here is read for control fields. */
export namespace stdout {
  /** Appends `text` (UTF-8 encoded). */
  export function write(text: string): void {
    appendString(callState().out, text);
  }
  /** Appends raw bytes. */
  export function writeBytes(data: Uint8Array): void {
    callState().out.append(data.dataStart, data.length);
  }
}

/** Standard error: on exit 2, the reason shown to the agent. */
export namespace stderr {
  /** Appends `text` (UTF-8 encoded). */
  export function write(text: string): void {
    appendString(callState().err, text);
  }
  /** Appends raw bytes. */
  export function writeBytes(data: Uint8Array): void {
    callState().err.append(data.dataStart, data.length);
  }
}

/** Writes `reason` to stderr and returns {@link BLOCK}: `return block("...")`. */
export function block(reason: string): i32 {
  stderr.write(reason);
  return BLOCK;
}
