/**
 * Building time one process may spend on JS hooks (bundling and snapshots),
 * refilled as time passes. An agent's hook call builds the hooks it finds one
 * after another, and a repository's many hooks whose top levels never end
 * would each take the snapshot's whole timeout: past this budget a build
 * fails at once and a later call tries it again, so no call is held past an
 * agent's hook timeout (Copilot ends one after 30 s, and then lets its tool
 * run). Builds already done are cached and cost nothing. The daemon gives
 * each project (its calls' folder) building time of its own (`withBuildTimeOf`). Only processes
 * that answer agents' calls bound it (`dispatch`, the daemon); `compile`,
 * `validate`, `bundle` and the service's builds take the time they need, each
 * build within its own timeouts.
 *
 * @module
 */
import { CallContext } from "../host-deno/call_context.ts";
import { HookboxError } from "../core/errors.ts";

/** Building time a process starts with, and holds at most, ms, unless `bound` is given another. */
export const BUILD_BUDGET_MS = 12_000;
/** Building time given back per ms, as a share of the whole (all of it a minute). */
const REFILL_SHARE_PER_MS = 1 / 60_000;

/** Building time left at a moment. */
interface Bucket {
  budget: number;
  at: number;
}

/** The building time of this process, ms (`bound`). */
let capacity = BUILD_BUDGET_MS;
const processBucket: Bucket = { budget: capacity, at: performance.now() };
/** The bucket of the call under way (`withBuildTimeOf`), where one is given. */
const current = new CallContext<Bucket>();
/** Buckets by project, least recently used first. */
const projects = new Map<string, Bucket>();
/** Projects whose building time is remembered; past it the least recently seen starts anew. */
const MAX_PROJECTS = 256;

/**
 * Runs `fn` with the building time of `project` (a folder): the daemon's
 * calls each spend their own project's time, so one repository's hooks never
 * use up the building time of the user's other projects.
 */
export function withBuildTimeOf<T>(project: string, fn: () => T): T {
  let bucket = projects.get(project);
  if (bucket === undefined) {
    if (projects.size >= MAX_PROJECTS) projects.delete(projects.keys().next().value!);
    bucket = { budget: capacity, at: performance.now() };
  } else projects.delete(project);
  projects.set(project, bucket);
  return current.run(bucket, fn);
}

/** The process's building time (or, inside `withBuildTimeOf`, the project's). */
export const buildTime = {
  bounded: false,
  /**
   * Bounds this process's building time from now on, to `ms` (refilled that
   * much a minute; 0: nothing is built in this process, every build is
   * handed to a process of its own).
   */
  bound(ms: number = BUILD_BUDGET_MS): void {
    this.bounded = true;
    capacity = ms;
    processBucket.budget = capacity;
    processBucket.at = performance.now();
    projects.clear();
  },
  /** Building time left now, ms (unbounded: Infinity). */
  left(): number {
    if (!this.bounded) return Infinity;
    const bucket = current.getStore() ?? processBucket;
    const now = performance.now();
    bucket.budget = Math.min(
      capacity,
      bucket.budget + (now - bucket.at) * capacity * REFILL_SHARE_PER_MS,
    );
    bucket.at = now;
    return bucket.budget;
  },
  /** Spends `ms` of it. */
  spend(ms: number): void {
    this.left();
    (current.getStore() ?? processBucket).budget -= ms;
  },
};

/** The building time this process holds at most, ms. */
export function buildCapacity(): number {
  return capacity;
}

/** Marks a build that stopped for want of the process's building time (tried again later). */
export const OUT_OF_BUDGET = Symbol("out of building time");

/** The failure of a build this process has no building time left for. */
export function outOfBudget(path?: string): HookboxError {
  return new HookboxError(
    "COMPILE_FAILED",
    capacity === 0
      ? "not built: this process builds nothing itself ($HOOKBOX_BUILD_MS is 0)"
      : `not built: this process has spent its ${capacity} ms of building time`,
    { ...(path === undefined ? {} : { path }), cause: OUT_OF_BUDGET },
  );
}
