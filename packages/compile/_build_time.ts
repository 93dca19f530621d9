/**
 * Building time one process may spend on JS hooks (bundling and snapshots),
 * refilled as time passes. An agent's hook call builds the hooks it finds one
 * after another, and a repository's many hooks whose top levels never end
 * would each take the snapshot's whole timeout: past this budget a build
 * fails at once and a later call tries it again, so no call is held past an
 * agent's hook timeout (Copilot ends one after 30 s, and then lets its tool
 * run). Builds already done are cached and cost nothing. Only processes
 * that answer agents' calls bound it (`dispatch`, the daemon); `compile`,
 * `validate`, `bundle` and the service's builds take the time they need, each
 * build within its own timeouts.
 *
 * @module
 */
import { HookboxError } from "../core/errors.ts";

/** Building time a process starts with, and holds at most, ms. */
export const BUILD_BUDGET_MS = 12_000;
/** Building time given back per ms (12 s a minute). */
const REFILL_PER_MS = 0.2;

/** The process's building time. */
export const buildTime = {
  bounded: false,
  budget: BUILD_BUDGET_MS,
  at: performance.now(),
  /** Bounds this process's building time from now on. */
  bound(): void {
    this.bounded = true;
    this.budget = BUILD_BUDGET_MS;
    this.at = performance.now();
  },
  /** Building time left now, ms (unbounded: Infinity). */
  left(): number {
    if (!this.bounded) return Infinity;
    const now = performance.now();
    this.budget = Math.min(BUILD_BUDGET_MS, this.budget + (now - this.at) * REFILL_PER_MS);
    this.at = now;
    return this.budget;
  },
  /** Spends `ms` of it. */
  spend(ms: number): void {
    this.left();
    this.budget -= ms;
  },
};

/** Marks a build that stopped for want of the process's building time (tried again later). */
export const OUT_OF_BUDGET = Symbol("out of building time");

/** The failure of a build this process has no building time left for. */
export function outOfBudget(path?: string): HookboxError {
  return new HookboxError(
    "COMPILE_FAILED",
    `not built: this process has spent its ${BUILD_BUDGET_MS} ms of building on other hooks; ` +
      "a later call builds it",
    { ...(path === undefined ? {} : { path }), cause: OUT_OF_BUDGET },
  );
}
