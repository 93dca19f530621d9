/**
 * Runs a tenant's stored hooks on an event: the platform hooks and the
 * tenant's own enabled hooks, loaded from the store and cached until the
 * store's hook generation changes (an upload, rollback or delete in any
 * process), then dispatched with the tenant's policy as the ceiling.
 *
 * @module
 */
import { dispatchEvent, type HookSelector } from "../core/dispatch/dispatch.ts";
import { type MatcherJob, selectHooksApart } from "../core/dispatch/select.ts";
import type { DispatchResult, HookRecord } from "../core/dispatch/result.ts";
import type { HookDefinition } from "../core/hook/types.ts";
import { effectiveLimits, type Policy, resolvePolicy } from "../core/policy.ts";
import type { Runtime, RuntimeKind } from "../core/runtime/types.ts";
import type { HookEvent } from "../core/schema/event.ts";
import {
  type HookHead,
  type HookRow,
  PLATFORM,
  type Store,
  type TenantPolicy,
} from "../store/store.ts";

/** A stored hook as dispatch sees it, with what the audit records of it. */
export interface ServedHook {
  /** The hook as the dispatcher runs it. */
  definition: HookDefinition;
  /** The active version. */
  version: number;
  /** SHA-256 of the plugin that runs. */
  sha256: string;
}

/** A version running in shadow beside its hook's active one (docs/replay.md). */
export interface ShadowHook {
  /** The hook's name. */
  name: string;
  /** The version in shadow, as dispatch runs it. */
  hook: ServedHook;
}

/** The dispatcher of the service. */
export interface Engine {
  /** The hooks that run for `tenantId`: platform first, then the tenant's, enabled only. */
  hooks(tenantId: string, generation?: number): Promise<ServedHook[]>;
  /**
   * The hooks last loaded for `tenantId` (null if none were), whatever the
   * store holds now: what an agent's call is checked against when the store
   * cannot be read (docs/ADAPTERS.md). Kept for the most recent tenants.
   */
  lastHooks(tenantId: string): ServedHook[] | null;
  /** The tenant's versions in shadow (none when the store keeps no shadows). */
  shadows(tenantId: string, generation?: number): Promise<ShadowHook[]>;
  /** Any stored version of one of the tenant's hooks, as dispatch would run it; null if none. */
  version(tenantId: string, name: string, version: number): Promise<ServedHook | null>;
  /**
   * Runs `event` for the tenant; `hooks` as from {@linkcode hooks}.
   * `fuelCap`: fuel the event's synchronous hooks may burn together at most
   * (what its `fuel_per_minute` reservation granted). `timeLimitMs`: wall
   * time they may take together (`Policy.eventTimeoutMs`).
   */
  dispatch(
    tenantId: string,
    policy: TenantPolicy,
    hooks: ServedHook[],
    event: HookEvent,
    fuelCap?: number,
    timeLimitMs?: number,
  ): Promise<DispatchResult>;
  /** The most fuel one event can burn with these hooks under the policy (for a reservation). */
  fuelCeiling(policy: TenantPolicy, hooks: ServedHook[]): number;
  /**
   * Has the runtimes load, instrument and compile the tenant's hooks (and the
   * platform's) under its policy now, ahead of their first event: after an
   * upload, the first event of a JS hook waited ~140 ms for that. Versions
   * already prepared cost nothing.
   */
  prepare(tenantId: string, policy: TenantPolicy): Promise<void>;
  /** Resolves when the async hooks started so far have finished (edge: `ctx.waitUntil`). */
  settled(): Promise<void>;
  /** Waits for async hooks. */
  close(): Promise<void>;
}

/** Tenants whose last-served hooks {@linkcode Engine.lastHooks} keeps. */
const LAST_HOOKS_TENANTS = 10_000;

/** Prefix of the `dir` of stored hooks (they have no folder). */
export const STORED_DIR = "hookbox-store:";

/** The plugin bytes of a stored hook: its entry path is the plugin's SHA-256. */
export function storedPluginSha(hook: HookDefinition): string | null {
  return hook.dir.startsWith(STORED_DIR) && hook.entry.runtime === "wasm" ? hook.entry.path : null;
}

/** Turns a tenant policy into the dispatcher's policy (never subprocesses). */
export function policyFor(policy: TenantPolicy): Policy {
  return resolvePolicy({
    allowSubprocess: false,
    ...(policy.max_memory_mb ? { maxMemoryMb: policy.max_memory_mb } : {}),
    ...(policy.max_fuel ? { maxFuel: policy.max_fuel } : {}),
    ...(policy.max_output_kb ? { maxOutputKb: policy.max_output_kb } : {}),
    ...(policy.max_timeout_ms ? { maxTimeoutMs: policy.max_timeout_ms } : {}),
    ...(policy.input_kb ? { inputKb: policy.input_kb } : {}),
    ...(policy.module_kb ? { moduleKb: policy.module_kb } : {}),
    allowedHosts: policy.allowed_hosts ?? [],
  });
}

/** Options of {@linkcode createEngine}. */
export interface EngineOptions {
  /** Where the hooks come from. */
  store: Store;
  /** The runtimes hooks run on, by kind. */
  runtimes: Partial<Record<RuntimeKind, Runtime>>;
  /** Caps each hook's fuel at its timeout × this rate (edge Workers; see `Policy.fuelPerMs`). */
  fuelPerMs?: number;
  /** Fuel one event's synchronous hooks may burn together (see `Policy.eventFuel`). */
  eventFuel?: number;
  /** Receives each async hook's record. */
  onAsyncResult?: (tenantId: string, record: HookRecord, event: HookEvent) => unknown;
  /**
   * Decides tenant matchers that cost more than {@linkcode INLINE_MATCHER_STEPS}
   * on another thread (the Deno server's event codec), so that a tenant's
   * pattern and event cannot hold the thread that answers every tenant: the
   * verdicts, or null when that thread failed (the hooks then run). Without
   * it, every matcher runs in place on the event's whole budget.
   */
  matchApart?: (tenantId: string, job: MatcherJob) => Promise<boolean[] | null>;
}

/**
 * Steps of an event's matcher budget a tenant's matchers may take on the
 * thread that runs the dispatch when {@linkcode EngineOptions.matchApart} is
 * given: well under 1 ms of searching (`scripts/bench_matchers.ts`), and at
 * most one compile begun within them (up to ~5 ms); the rest of the budget
 * is spent on the other thread.
 */
export const INLINE_MATCHER_STEPS = 1 << 16;

/** Builds the service's dispatcher over `store`. */
export function createEngine(options: EngineOptions): Engine {
  const { store } = options;
  let generation = -1;
  let cache = new Map<string, Promise<ServedHook[]>>();
  let shadowCache = new Map<string, Promise<ShadowHook[]>>();
  const pending = new Set<Promise<unknown>>();
  const abort = new AbortController();
  // A tenant's policy object is replaced, never changed, when its row is written, so the
  // dispatcher's policy is worked out once per object instead of once per event.
  const policies = new WeakMap<TenantPolicy, Policy>();
  const resolved = (policy: TenantPolicy): Policy => {
    let found = policies.get(policy);
    if (found === undefined) {
      found = options.fuelPerMs === undefined && options.eventFuel === undefined
        ? policyFor(policy)
        : {
          ...policyFor(policy),
          ...(options.fuelPerMs !== undefined ? { fuelPerMs: options.fuelPerMs } : {}),
          ...(options.eventFuel !== undefined ? { eventFuel: options.eventFuel } : {}),
        };
      policies.set(policy, found);
    }
    return found;
  };

  // A hook version is never rewritten, so its definition is kept across
  // generations: the runtimes key compiled plugins and warm instances by the
  // definition, and one tenant's upload must not make every other tenant's
  // hooks cold. Kept while used in this generation or the one before.
  let current = new Map<string, ServedHook>();
  let previous = new Map<string, ServedHook>();
  const keyOf = (h: HookHead) =>
    JSON.stringify([h.tenant_id, h.name, h.version, h.sha256, h.created_at]);
  const known = (key: string): ServedHook | undefined => {
    const found = current.get(key) ?? previous.get(key);
    if (found !== undefined) current.set(key, found);
    return found;
  };
  // A head names the version; only a version not seen before is read whole
  // (a store that lists whole rows hands them over at once).
  const servedOnce = async (head: HookHead | HookRow): Promise<ServedHook | null> => {
    const found = known(keyOf(head));
    if (found !== undefined) return found;
    const row = "manifest" in head ? head : await store.activeHook!(head.tenant_id, head.name);
    if (row === null) return null; // deleted since it was listed: the generation has moved on
    const key = keyOf(row);
    const made = known(key) ?? served(row);
    current.set(key, made);
    return made;
  };
  const listed = (tenantId: string): Promise<(HookHead | HookRow)[]> =>
    store.listHookHeads && store.activeHook
      ? store.listHookHeads(tenantId)
      : store.listHooks(tenantId);
  const load = async (tenantId: string): Promise<ServedHook[]> => {
    const [platform, own] = await Promise.all([
      listed(PLATFORM),
      tenantId === PLATFORM ? [] : listed(tenantId),
    ]);
    const platformNames = new Set(platform.map((h) => h.name));
    const hooks = await Promise.all([
      ...platform.filter((h) => h.enabled).map(servedOnce),
      ...own.filter((h) => h.enabled && !platformNames.has(h.name)).map(servedOnce),
    ]);
    return hooks.filter((h) => h !== null);
  };

  const turn = async (known?: number) => {
    const now = known ?? await store.hooksGeneration();
    if (now !== generation) {
      generation = now;
      cache = new Map();
      shadowCache = new Map();
      previous = current;
      current = new Map();
    }
  };
  const cached = <T>(map: Map<string, Promise<T>>, tenantId: string, make: () => Promise<T>) => {
    let found = map.get(tenantId);
    if (!found) {
      found = make();
      map.set(tenantId, found);
      found.catch(() => map.delete(tenantId));
    }
    return found;
  };
  // The hooks each tenant was last served, kept across generations for an agent's call the
  // store cannot answer; the oldest go past LAST_HOOKS_TENANTS tenants.
  const last = new Map<string, ServedHook[]>();
  const hooks = async (tenantId: string, known?: number): Promise<ServedHook[]> => {
    await turn(known);
    const found = await cached(cache, tenantId, () => load(tenantId));
    if (last.get(tenantId) !== found) {
      last.delete(tenantId);
      if (last.size >= LAST_HOOKS_TENANTS) last.delete(last.keys().next().value!);
      last.set(tenantId, found);
    }
    return found;
  };
  const version = async (tenantId: string, name: string, v: number) => {
    const row = await store.getVersion(tenantId, name, v);
    return row === null ? null : await servedOnce(row);
  };
  const loadShadows = async (tenantId: string): Promise<ShadowHook[]> => {
    const states = await store.listShadows?.(tenantId) ?? [];
    const found = await Promise.all(
      states.map(async ({ name, version: v }) => {
        const hook = await version(tenantId, name, v);
        return hook === null ? null : { name, hook };
      }),
    );
    return found.filter((s) => s !== null);
  };

  return {
    hooks,
    lastHooks: (tenantId) => last.get(tenantId) ?? null,
    async shadows(tenantId, known) {
      if (store.listShadows === undefined) return [];
      await turn(known);
      return await cached(shadowCache, tenantId, () => loadShadows(tenantId));
    },
    version,
    async prepare(tenantId, policy) {
      const wasm = options.runtimes.wasm;
      const prepare = wasm?.prepareAll?.bind(wasm) ?? wasm?.prepare?.bind(wasm);
      if (prepare === undefined) return;
      const ceiling = resolved(policy);
      await Promise.all(
        (await hooks(tenantId))
          .filter(({ definition }) => definition.entry.runtime === "wasm")
          .map(({ definition }) =>
            prepare(definition, effectiveLimits(definition.manifest, ceiling))
          ),
      );
    },
    fuelCeiling(policy, hooks) {
      const ceiling = resolved(policy);
      const sum = hooks.reduce(
        (n, { definition }) =>
          definition.entry.runtime === "wasm" && !definition.manifest.async
            ? n + effectiveLimits(definition.manifest, ceiling).fuel
            : n,
        0,
      );
      return Math.min(sum, ceiling.eventFuel ?? Infinity);
    },
    dispatch(tenantId, policy, hooks, event, fuelCap, timeLimitMs) {
      const base = resolved(policy);
      const apart = options.matchApart;
      const select: HookSelector | undefined = apart === undefined
        ? undefined
        : (some, seen) =>
          selectHooksApart(some, seen, "tenant", INLINE_MATCHER_STEPS, (job) =>
            apart(tenantId, job));
      return dispatchEvent(hooks.map((h) => h.definition), event, {
        ...(select === undefined ? {} : { select }),
        runtimes: options.runtimes,
        policy: fuelCap === undefined && timeLimitMs === undefined ? base : {
          ...base,
          ...(fuelCap === undefined
            ? {}
            : { eventFuel: Math.max(1, Math.min(fuelCap, base.eventFuel ?? Infinity)) }),
          ...(timeLimitMs === undefined
            ? {}
            : { eventTimeoutMs: Math.min(timeLimitMs, base.eventTimeoutMs ?? Infinity) }),
        },
        tenantId,
        env: {},
        signal: abort.signal,
        track: (p) => {
          pending.add(p);
          const done = () => pending.delete(p);
          p.then(done, done);
        },
        onAsyncResult: (record, seen) => options.onAsyncResult?.(tenantId, record, seen),
      });
    },
    async settled() {
      await Promise.allSettled([...pending]);
    },
    async close() {
      await Promise.allSettled([...pending]);
      abort.abort();
    },
  };
}

function served(row: HookRow): ServedHook {
  const level = row.tenant_id === PLATFORM ? "platform" : "tenant";
  const definition: HookDefinition = {
    name: row.name,
    level,
    dir: `${STORED_DIR}${row.tenant_id || "platform"}/${row.name}@${row.version}`,
    manifest: row.manifest,
    body: row.body,
    entry: row.runtime === "wasm"
      ? { runtime: "wasm", format: "wasm", path: row.sha256 }
      : { runtime: "prompt" },
  };
  return { definition, version: row.version, sha256: row.sha256 };
}
