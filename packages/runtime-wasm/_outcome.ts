/**
 * Turns the way a call ended — a return, a host halt, a stack overflow, a
 * trap, or a host-side error raised on the guest's behalf — into a
 * {@linkcode RunResult}.
 *
 * @module
 */
import { messageOf, runFailure } from "../core/runtime/failure.ts";
import type { RunResult } from "../core/runtime/types.ts";
import { isStackOverflow } from "./instance/_halt.ts";
import type { GuestHost } from "./_host.ts";

/**
 * The result of a call that ended with `exitCode` (a return or `proc_exit`),
 * unless the deadline passed, the fuel ran out or the call was aborted
 * meanwhile: then that limit is the result. An exit other than 0 (allow) and 2 (a deliberate block) after a failed
 * `memory.grow` is reported as `limit` / `memory`: that is how programs that
 * check malloc give up.
 */
export function exited(host: GuestHost, exitCode: number): RunResult {
  const stdout = host.stdout.text();
  const stderr = host.stderr.text();
  // A call that ran past its deadline or budget (a wait, a last overdrawn
  // block, a host call that took long) reports that limit, not its answer.
  const late = host.pending();
  if (late !== null && late.kind === "failure") {
    return { exitCode: null, stdout, stderr, failure: late.failure };
  }
  if (host.growFailed && exitCode !== 0 && exitCode !== 2) {
    return { exitCode, stdout, stderr, failure: runFailure("LIMIT_MEMORY") };
  }
  return { exitCode, stdout, stderr };
}

/** Classifies an exception that ended a call on `host` (null: the host halted it). */
export function classify(err: unknown, host: GuestHost): RunResult {
  const halt = host.halted;
  if (halt?.kind === "exit") return exited(host, halt.code);
  const stdout = host.stdout.text();
  const stderr = host.stderr.text();
  if (halt?.kind === "failure") return { exitCode: null, stdout, stderr, failure: halt.failure };
  if (isStackOverflow(err)) {
    return { exitCode: null, stdout, stderr, failure: runFailure("LIMIT_STACK") };
  }
  // Allocators trap (abort) once `memory.grow` failed; the rewriter tells us it did.
  if (err instanceof WebAssembly.RuntimeError && host.growFailed) {
    return { exitCode: null, stdout, stderr, failure: runFailure("LIMIT_MEMORY") };
  }
  return { exitCode: null, stdout, stderr, failure: runFailure("TRAP", messageOf(err)) };
}
