/**
 * How a call stops early. A host import records a {@linkcode Halt} on the call
 * state and then unwinds the whole guest stack. A guest that uses exception
 * handling could catch a JS exception with `catch_all`, but never a trap, so
 * such a guest is stopped with a genuine WebAssembly trap; a guest without
 * `try`/`try_table` has no way to catch anything, and is stopped with
 * {@linkcode throwStop}, which costs a fraction of a trap.
 *
 * @module
 */
import { type FailureCode, type RunFailure, runFailure } from "../../core/runtime/failure.ts";

/** Why the host stopped a call: a normal `proc_exit`, or a failure. */
export type Halt = { kind: "exit"; code: number } | { kind: "failure"; failure: RunFailure };

/** A failure halt with the given code and message. */
export function failure(code: FailureCode, message?: string): Halt {
  return { kind: "failure", failure: runFailure(code, message) };
}

/** Frozen halts for the common limits, so stopping allocates nothing. */
export const HALTS = {
  fuel: failure("LIMIT_FUEL"),
  memory: failure("LIMIT_MEMORY"),
  stack: failure("LIMIT_STACK"),
  output: failure("LIMIT_OUTPUT"),
  time: failure("TIMEOUT"),
  aborted: failure("ABORTED"),
} as const;

/** `(module (func (export "t") unreachable))`, assembled by hand. */
export const TRAP_MODULE_BYTES: Uint8Array = new Uint8Array([
  0x00,
  0x61,
  0x73,
  0x6d,
  0x01,
  0x00,
  0x00,
  0x00, // magic, version
  0x01,
  0x04,
  0x01,
  0x60,
  0x00,
  0x00, // type: () -> ()
  0x03,
  0x02,
  0x01,
  0x00, // one function of type 0
  0x07,
  0x05,
  0x01,
  0x01,
  0x74,
  0x00,
  0x00, // export "t" = func 0
  0x0a,
  0x05,
  0x01,
  0x03,
  0x00,
  0x00,
  0x0b, // body: unreachable, end
]);

/** A function that always traps (`unreachable`), from an instance of the trap module. */
export function trapFunction(module: WebAssembly.Module): () => never {
  const instance = new WebAssembly.Instance(module);
  return instance.exports.t as () => never;
}

/**
 * The one exception {@linkcode throwStop} throws, allocated at the first stop
 * so that throwing captures nothing. Not made at module evaluation: an Error
 * constructed there makes V8 reparse the whole (bundled) module for its
 * source positions, 20–30 ms of every one-shot CLI start.
 */
let stop: Error | undefined;

/** True for the exception {@linkcode throwStop} throws. */
export function isStop(err: unknown): boolean {
  return err !== undefined && err === stop;
}

/** Stops a guest that cannot catch exceptions (see the module doc). */
export function throwStop(): never {
  throw (stop ??= new Error("hookbox: guest stopped by the host"));
}

/** True for V8's stack overflow, which the guest cannot catch either. */
export function isStackOverflow(err: unknown): boolean {
  return err instanceof RangeError && /call stack size/i.test(err.message);
}
