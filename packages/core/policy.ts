/**
 * The host policy: what the operator allows, and the ceilings that lower (never
 * raise) each hook's own limits. One policy object flows through dispatch per
 * tenant.
 *
 * @module
 */
import { HookboxError } from "./errors.ts";
import type { EffectiveLimits } from "./runtime/types.ts";
import type { Manifest } from "./schema/manifest.ts";
import type { HookDefinition } from "./hook/types.ts";

/** Operator policy. Every field is optional on input; see {@linkcode resolvePolicy}. */
export interface Policy {
  /** Let hooks run as host subprocesses. @default false */
  allowSubprocess: boolean;
  /** Ceiling on a hook's linear memory, MiB. @default 256 */
  maxMemoryMb: number;
  /** Ceiling on a hook's fuel per call. @default 10_000_000_000 */
  maxFuel: number;
  /** Ceiling on a hook's stdout / stderr, KiB each. @default 4096 */
  maxOutputKb: number;
  /** Ceiling on a hook's timeout, ms. @default 600_000 */
  maxTimeoutMs: number;
  /** Largest event handed to a hook, KiB. @default 1024 */
  inputKb: number;
  /** Largest WebAssembly module accepted, KiB (the JS engine plugin is about 1.3 MB). @default 4096 */
  moduleKb: number;
  /** Names of user/project hooks this tenant switched off (platform hooks cannot be). @default [] */
  disabledHooks: readonly string[];
  /**
   * Hosts user and project hooks may reach (their own `allowed_hosts` are
   * narrowed to these; platform hooks keep theirs). Also the only way a hook
   * reaches a loopback, private or link-local address: such a host must be
   * named here exactly, not through a wildcard. @default []
   */
  allowedHosts: readonly string[];
  /**
   * Where the clock cannot bound CPU (deployed edge Workers freeze it during
   * CPU work), a hook's fuel is also capped at its timeout × this rate, so its
   * timeout becomes a fuel budget. Unset: fuel and timeout are separate limits.
   */
  fuelPerMs?: number;
  /**
   * Fuel the synchronous hooks of one event may burn together: each hook of
   * the chain gets at most what the hooks before it left, and once it is
   * spent the rest end as `limit` (`LIMIT_FUEL`) without running, `on_error`
   * applied. Bounds an event's CPU where a platform limit would kill the whole
   * request instead (edge Workers). Unset: only each hook's own fuel.
   */
  eventFuel?: number;
  /**
   * Wall time the synchronous hooks of one event may take together, ms (from
   * the start of its dispatch): each hook's timeout is lowered to what is
   * left, and once it is spent the rest end as `timeout` without running,
   * `on_error` applied. An agent waits for its hook call a set time and then
   * lets the action through (Copilot after 30 s): many hooks at their own
   * limits must not take longer. Unset: only each hook's own timeout.
   */
  eventTimeoutMs?: number;
  /**
   * What the synchronous hooks of one event may print together (stdout and
   * stderr), KiB: each hook's output caps are lowered to what the hooks before
   * it left, and once it is spent the rest end as `limit` (`LIMIT_OUTPUT`)
   * without running, `on_error` applied. Bounds the memory and the answer of
   * one event, which a thousand hooks at their own caps would not.
   * @default 4096
   */
  eventOutputKb: number;
  /**
   * What the synchronous hooks of one event are handed together (each gets
   * the event as JSON, with what the hooks before it changed), KiB: once it is
   * spent the rest end as `limit` (`LIMIT_INPUT`) without running. Bounds the
   * host's work per event: a thousand hooks on a 1 MiB event cost the thread
   * that runs the chain about 5 s of serialising. @default 16384
   */
  eventInputKb: number;
}

/** The defaults: deny subprocesses, generous but finite ceilings. */
export const DEFAULT_POLICY: Readonly<Policy> = Object.freeze({
  allowSubprocess: false,
  maxMemoryMb: 256,
  maxFuel: 10_000_000_000,
  maxOutputKb: 4096,
  maxTimeoutMs: 600_000,
  inputKb: 1024,
  moduleKb: 4096,
  eventOutputKb: 4096,
  eventInputKb: 16384,
  disabledHooks: [],
  allowedHosts: [],
});

/** Fills defaults and fails fast with a TypeError naming a bad option. */
export function resolvePolicy(partial: Partial<Policy> = {}): Policy {
  const policy: Policy = { ...DEFAULT_POLICY, ...stripUndefined(partial) };
  for (
    const key of [
      "maxMemoryMb",
      "maxFuel",
      "maxOutputKb",
      "maxTimeoutMs",
      "inputKb",
      "moduleKb",
      "eventOutputKb",
      "eventInputKb",
    ] as const
  ) {
    const value = policy[key];
    if (!Number.isFinite(value) || value <= 0) {
      throw new TypeError(`policy.${key} must be a positive number, got ${String(value)}`);
    }
  }
  for (const key of ["fuelPerMs", "eventFuel", "eventTimeoutMs"] as const) {
    const value = policy[key];
    if (value !== undefined && (!Number.isFinite(value) || value <= 0)) {
      throw new TypeError(`policy.${key} must be a positive number, got ${value}`);
    }
  }
  if (typeof policy.allowSubprocess !== "boolean") {
    throw new TypeError("policy.allowSubprocess must be a boolean");
  }
  return policy;
}

/**
 * The hosts a hook may reach: a platform hook's own `allowed_hosts`; for user
 * and project hooks, only those of theirs the operator's `allowedHosts` also
 * grants (an exact host granted by an exact host or a covering wildcard; a
 * wildcard only by the same or a broader wildcard). Deny by default.
 */
export function grantedHosts(hook: HookDefinition, policy: Policy): string[] {
  const own = hook.manifest.allowed_hosts;
  if (hook.level === "platform") return [...own];
  return own.filter((pattern) => policy.allowedHosts.some((op) => covers(op, pattern)));
}

function covers(operator: string, pattern: string): boolean {
  const op = operator.toLowerCase();
  const p = pattern.toLowerCase();
  if (!op.startsWith("*.")) return op === p;
  const suffix = op.slice(1); // ".example.com"
  const host = p.startsWith("*.") ? p.slice(1) : p;
  return host.endsWith(suffix) && (host.length > suffix.length || p.startsWith("*."));
}

/** A hook's limits after the policy lowered them. */
export function effectiveLimits(manifest: Manifest, policy: Policy): EffectiveLimits {
  return {
    memoryMb: Math.floor(Math.min(manifest.limits.memory_mb, policy.maxMemoryMb)),
    fuel: Math.floor(
      Math.min(
        manifest.limits.fuel,
        policy.maxFuel,
        policy.fuelPerMs === undefined
          ? Infinity
          : Math.min(manifest.timeout, policy.maxTimeoutMs) * policy.fuelPerMs,
      ),
    ),
    outputKb: Math.min(manifest.limits.output_kb, policy.maxOutputKb),
    inputKb: policy.inputKb,
    moduleKb: policy.moduleKb,
    timeoutMs: Math.min(manifest.timeout, policy.maxTimeoutMs),
  };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  if (typeof value !== "object" || value === null) {
    throw new HookboxError("OPTION_INVALID", "policy must be an object");
  }
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
