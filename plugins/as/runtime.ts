// deno-fmt-ignore-file -- AssemblyScript source.
/**
 * Call lifecycle, used by the entry wrapper hookbox's compiler generates
 * around a hook's `hook()` function. Hook authors do not import this.
 */

import { error_set, output_set } from "./kernel";
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

/** End of a call: hand stdout (`output_set`) and stderr (`error_set`) to the host. */
export function flush(): void {
  const out = callState().out;
  if (out.length > 0) output_set(out.toHost(), <u64>out.length);
  const err = callState().err;
  if (err.length > 0) error_set(err.toHost());
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
