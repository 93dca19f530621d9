// deno-fmt-ignore-file -- AssemblyScript source.
/**
 * Call lifecycle, used by the entry wrapper hookbox's compiler generates
 * around a hook's `hook()` function. Hook authors do not import this.
 */

import { fd_write, proc_exit } from "./wasi";
import { appendString, callState } from "./_state";

const COLLECT_EVERY: i32 = 16;
let calls: i32 = 0;

/** True every few calls, or when memory grew during this one: time to collect garbage. */
export function shouldCollect(): bool {
  const pages = <i32>memory.size();
  const due = ++calls >= COLLECT_EVERY || pages != pagesAtBegin;
  if (due) calls = 0;
  return due;
}

let pagesAtBegin: i32 = 0;

/** Start of a call: forget the previous call's input and output. */
export function begin(): void {
  pagesAtBegin = <i32>memory.size();
  callState().reset();
}

/** Writes `length` bytes at `base` to `fd` (stops at an error: the host has refused them). */
function writeAll(fd: i32, base: usize, length: i32): void {
  const iov = heap.alloc(16);
  let done = 0;
  while (done < length) {
    store<u32>(iov, <u32>(base + <usize>done));
    store<u32>(iov, <u32>(length - done), 4);
    if (fd_write(fd, iov, 1, iov + 8) != 0) break;
    const wrote = <i32>load<u32>(iov, 8);
    if (wrote == 0) break;
    done += wrote;
  }
  heap.free(iov);
}

/** End of a call: hand stdout and stderr to the host (fds 1 and 2). */
export function flush(): void {
  const state = callState();
  writeAll(1, state.out.dataStart, state.out.length);
  writeAll(2, state.err.dataStart, state.err.length);
}

/** The call's exit code, to the host: ends the call. */
export function exit(code: i32): void {
  proc_exit(code);
}

/** Replaces AssemblyScript's `env.abort` (`--use abort=...`): reason to stderr, then trap. */
export function abort(
  message: string | null,
  fileName: string | null,
  line: u32,
  column: u32,
): void {
  let text = "abort: " + (message === null ? "(no message)" : message);
  if (fileName !== null) {
    text += " at " + fileName + ":" + line.toString() + ":" + column.toString();
  }
  appendString(callState().err, text);
  flush();
  unreachable();
}

/** Replaces AssemblyScript's `env.trace` (`--use trace=...`): the message to stderr. */
export function trace(
  message: string,
  n: i32 = 0,
  a0: f64 = 0, a1: f64 = 0, a2: f64 = 0, a3: f64 = 0, a4: f64 = 0,
): void {
  let text = "trace: " + message;
  const args = [a0, a1, a2, a3, a4];
  for (let i = 0; i < n && i < 5; i++) text += " " + args[i].toString();
  appendString(callState().err, text + "\n");
}
