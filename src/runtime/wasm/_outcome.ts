/**
 * Turns the way a call ended — a host halt, a stack overflow, a trap, or a
 * host-side error raised on the guest's behalf — into a {@linkcode RunResult}.
 *
 * @module
 */
import type { RunResult } from "../types.ts";
import { isStackOverflow } from "./_halt.ts";
import type { GuestHost } from "./_host.ts";

/** Classifies an exception that ended a call on `host`. */
export function classify(err: unknown, host: GuestHost, startBytes: number): RunResult {
  const stdout = host.stdout.text();
  const stderr = host.stderr.text();
  const halt = host.halted;
  if (halt?.kind === "exit") return { exitCode: halt.code, stdout, stderr };
  if (halt?.kind === "failure") return { exitCode: null, stdout, stderr, failure: halt.failure };
  if (isStackOverflow(err)) {
    return { exitCode: null, stdout, stderr, failure: { outcome: "limit", detail: "stack" } };
  }
  if (err instanceof WebAssembly.RuntimeError && memoryExhausted(host, startBytes)) {
    return { exitCode: null, stdout, stderr, failure: { outcome: "limit", detail: "memory" } };
  }
  const message = err instanceof Error ? err.message : String(err);
  return {
    exitCode: null,
    stdout,
    stderr,
    failure: { outcome: "error", detail: `trap: ${message}` },
  };
}

/**
 * A trap counts as running out of memory when the memory sits at the cap, or
 * when the guest grew it during this call and less than a quarter of the cap
 * is left (allocators abort with a trap when `memory.grow` fails, which leaves
 * the memory somewhat below the cap). A heuristic: wasm does not tell the host
 * that a `memory.grow` failed.
 */
function memoryExhausted(host: GuestHost, startBytes: number): boolean {
  const current = host.memory?.buffer.byteLength ?? 0;
  const cap = host.memoryBytes;
  return current >= cap || (current > startBytes && cap - current <= cap / 4);
}
