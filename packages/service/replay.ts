/**
 * Capture, replay and shadow (docs/replay.md): a capturing tenant's events
 * are kept beside their audit rows; a candidate version of a hook is run on
 * kept events (replay) or beside the active version on live ones (shadow),
 * and what it would have answered differently is reported, never applied.
 *
 * @module
 */
import type { DispatchResult } from "../core/dispatch/result.ts";
import { isHookboxError } from "../core/errors.ts";
import type { HookEvent } from "../core/schema/event.ts";
import { parseEventText } from "../core/schema/event_text.ts";
import type { CapturePolicy, ShadowRun, TenantRow } from "../store/store.ts";
import type { ServedHook, ShadowHook } from "./engine.ts";
import { ApiError } from "./errors.ts";
import type { ServiceContext } from "./routes/context.ts";

/** Largest event kept when the policy names no `max_event_kb`, KiB. */
export const CAPTURE_EVENT_KB = 64;

/** Days a captured event is kept when the policy names no `retention_days`. */
export const CAPTURE_RETENTION_DAYS = 7;

/** What a redacted value becomes. */
export const REDACTED = "[redacted]";

/** Most bytes of captured event text one replay page reads. */
export const REPLAY_PAGE_BYTES = 4 * 1024 * 1024;

/**
 * Longest one replay page runs, ms: past it the page ends after the event
 * under way, with a cursor (a tenant's hooks may each take minutes).
 */
export const REPLAY_PAGE_MS = 30_000;

/** Longest reason a comparison keeps (a reason can be a megabyte). */
const SUMMARY_REASON_CHARS = 500;

/** The fields of an answer a comparison looks at. */
const COMPARED = [
  "decision",
  "reason",
  "blocked_by",
  "modified_input",
  "modified_output",
  "inject",
  "disable_tools",
  "enable_tools",
] as const;

/** An answer, as a comparison shows it. */
export interface AnswerSummary {
  /** `allow` or `block`. */
  decision: string;
  /** Why it blocked (its first 500 characters). */
  reason: string | null;
  /** The hook that blocked. */
  blocked_by: string | null;
}

/** How a candidate's answer to one event differs from the active chain's. */
export interface AnswerDiff {
  /** The event's type. */
  event_type: string;
  /** The fields that differ (`decision`, `reason`, `modified_input`, ...). */
  changed: string[];
  /** The active chain's answer. */
  active: AnswerSummary;
  /** The answer with the candidate (or shadow) version in its hook's place. */
  candidate: AnswerSummary;
}

/** A replay's page (`POST /v1/hooks/{name}/versions/{version}/replay`). */
export interface ReplayReport {
  /** The hook. */
  name: string;
  /** The candidate version. */
  version: number;
  /** Whether the tenant's policy captures events now. */
  capturing: boolean;
  /** Captured events this page ran. */
  examined: number;
  /** Captured events that no longer validate (a redaction replaced a field they need). */
  skipped: number;
  /** The events whose answer the candidate changes, with their decision ids and times. */
  changed: Array<AnswerDiff & { decision_id: string; at: string }>;
  /** Where the next page starts, or null after the newest captured event. */
  next_cursor: string | null;
}

/**
 * The event as kept for replay: its JSON with the policy's `redact` keys'
 * values replaced (wherever they appear, compared without case), or null when
 * that is over `max_event_kb`.
 */
export function capturedText(event: HookEvent, policy: CapturePolicy): string | null {
  const text = redactedText(event, policy.redact ?? []);
  const max = (policy.max_event_kb ?? CAPTURE_EVENT_KB) * 1024;
  // A UTF-8 byte is at most 3 per UTF-16 unit: most events are settled without encoding them.
  if (text.length * 3 <= max) return text;
  return new TextEncoder().encode(text).length <= max ? text : null;
}

/**
 * The event's JSON without its `tenant_id`, the values of `redact`'s keys
 * (compared without case, at any depth) replaced by {@linkcode REDACTED}.
 */
export function redactedText(event: HookEvent, redact: readonly string[]): string {
  const keys = new Set(redact.map((k) => k.toLowerCase()));
  const { tenant_id: _tenant, ...rest } = event as HookEvent & { tenant_id?: string };
  return keys.size === 0
    ? JSON.stringify(rest)
    : JSON.stringify(rest, (key, value) => keys.has(key.toLowerCase()) ? REDACTED : value);
}

/** Only the hooks that can change an answer: async hooks never do. */
function synchronous(hooks: readonly ServedHook[]): ServedHook[] {
  return hooks.filter((h) => h.definition.manifest.async !== true);
}

/**
 * The chain with `candidate` in place of its hook's active version (or added,
 * when the hook is disabled), as the tenant's hooks are ordered: platform
 * first, then the tenant's by name. A platform hook of the same name stands
 * in front of the tenant's, live and here.
 */
export function withCandidate(served: readonly ServedHook[], candidate: ServedHook): ServedHook[] {
  const name = candidate.definition.name;
  const platform = served.filter((h) => h.definition.level === "platform");
  if (platform.some((h) => h.definition.name === name)) return synchronous(served);
  const own = served.filter((h) => h.definition.level !== "platform" && h.definition.name !== name);
  own.push(candidate);
  own.sort((a, b) => a.definition.name < b.definition.name ? -1 : 1);
  return synchronous([...platform, ...own]);
}

function summary(r: DispatchResult): AnswerSummary {
  return {
    decision: r.decision,
    reason: r.reason === null ? null : r.reason.slice(0, SUMMARY_REASON_CHARS),
    blocked_by: r.blocked_by,
  };
}

/** What differs between two answers to one event, or null when they agree. */
export function answerDiff(active: DispatchResult, candidate: DispatchResult): AnswerDiff | null {
  const changed = COMPARED.filter((field) =>
    JSON.stringify(active[field] ?? null) !== JSON.stringify(candidate[field] ?? null)
  );
  if (changed.length === 0) return null;
  return {
    event_type: active.event_type,
    changed,
    active: summary(active),
    candidate: summary(candidate),
  };
}

/**
 * Runs `hooks` on `event` under the tenant's fuel quota (reserved before,
 * settled after, as a live event is). Throws `429` when the quota is spent.
 */
async function runMetered(
  ctx: Pick<ServiceContext, "engine" | "quotas">,
  tenant: TenantRow,
  hooks: ServedHook[],
  event: HookEvent,
): Promise<DispatchResult> {
  const { engine, quotas } = ctx;
  const fuel = await quotas.reserveFuel(
    tenant.id,
    tenant.policy,
    engine.fuelCeiling(tenant.policy, hooks),
  );
  let used = 0;
  try {
    const result = await engine.dispatch(tenant.id, tenant.policy, hooks, event, fuel?.granted);
    used = result.hooks.reduce((sum, h) => sum + h.fuel, 0);
    return result;
  } finally {
    await fuel?.settle(used).catch(() => {});
  }
}

/**
 * One page of a replay: the tenant's captured events from `since` (or the
 * cursor), each run through the active chain and through the chain with
 * version `version` of `name` in its place. A fuel quota spent part-way ends
 * the page early, with a cursor to go on from.
 */
export async function replayPage(
  ctx: ServiceContext,
  tenant: TenantRow,
  name: string,
  version: number,
  query: { since?: string | undefined; limit: number; cursor?: string | undefined },
): Promise<ReplayReport> {
  const { store, engine } = ctx;
  if (store.readCaptures === undefined) {
    throw new ApiError(501, "NOT_IMPLEMENTED", "this service keeps no events to replay");
  }
  const candidate = await engine.version(tenant.id, name, version);
  if (candidate === null) throw versionNotFound(name, version);
  const served = await engine.hooks(tenant.id);
  const active = synchronous(served);
  const trial = withCandidate(served, candidate);
  let page;
  try {
    page = await store.readCaptures({
      tenant_id: tenant.id,
      since: query.since === undefined ? undefined : new Date(query.since).toISOString(),
      cursor: query.cursor,
      limit: query.limit,
      bytes: REPLAY_PAGE_BYTES,
    });
  } catch (err) {
    if (isHookboxError(err, "CURSOR_INVALID")) {
      throw new ApiError(400, "CURSOR_INVALID", err.message, { field: "cursor" });
    }
    throw err;
  }
  const started = ctx.now();
  const report: ReplayReport = {
    name,
    version,
    capturing: tenant.policy.capture !== undefined,
    examined: 0,
    skipped: 0,
    changed: [],
    next_cursor: page.next_cursor,
  };
  for (const item of page.items) {
    let parsed;
    try {
      parsed = parseEventText({ text: item.event, tenantId: tenant.id });
    } catch {
      parsed = null;
    }
    if (parsed === null || !parsed.ok) {
      report.skipped++;
      continue;
    }
    let before: DispatchResult;
    let after: DispatchResult;
    try {
      before = await runMetered(ctx, tenant, active, parsed.event);
      after = await runMetered(ctx, tenant, trial, parsed.event);
    } catch (err) {
      // The fuel quota ran out: what was run is answered, the rest is the next page.
      if (err instanceof ApiError && err.status === 429 && report.examined + report.skipped > 0) {
        report.next_cursor = previousCursor(page.items, item.cursor);
        return report;
      }
      throw err;
    }
    report.examined++;
    const diff = answerDiff(before, after);
    if (diff !== null) report.changed.push({ decision_id: item.decision_id, at: item.at, ...diff });
    if (ctx.now() - started >= REPLAY_PAGE_MS && item !== page.items.at(-1)) {
      report.next_cursor = item.cursor;
      return report;
    }
  }
  return report;
}

/** The cursor after the item before the one whose own cursor is `at` (null: from the start). */
function previousCursor(items: ReadonlyArray<{ cursor: string }>, at: string): string | null {
  const i = items.findIndex((item) => item.cursor === at);
  return i > 0 ? items[i - 1]!.cursor : null;
}

function versionNotFound(name: string, version: number | string): ApiError {
  return new ApiError(404, "VERSION_NOT_FOUND", `"${name}" has no version ${version}`, {
    field: "version",
  });
}

/** One live event a tenant's shadows run beside. */
export interface ShadowCall {
  /** The tenant. */
  tenant: TenantRow;
  /** The event as the live chain saw it. */
  event: HookEvent;
  /** The live answer. */
  live: DispatchResult;
  /** The live chain. */
  served: readonly ServedHook[];
  /** The live decision's id. */
  decisionId: string;
  /** The hooks generation the live chain came from. */
  generation: number | undefined;
}

/**
 * Runs the tenant's shadow versions beside one live event whose answer was
 * `live`, after that answer: each shadow's chain is the live one with its
 * version in place, and only the comparison is kept (`shadow_runs`, metrics).
 * One run per tenant at a time: an event that comes while one is under way is
 * counted as `skipped`, so a busy tenant's shadows are a sample and cost it at
 * most one extra chain at a time; the runs draw on the tenant's fuel quota.
 */
export class ShadowRunner {
  readonly #busy = new Set<string>();
  readonly #pending = new Set<Promise<void>>();

  /** A runner over the service's parts. */
  constructor(
    private readonly ctx: Pick<
      ServiceContext,
      "store" | "engine" | "quotas" | "metrics" | "log" | "iso"
    >,
  ) {}

  /** Starts the tenant's shadow runs for this event, if it has shadows; never throws. */
  start(call: ShadowCall): void {
    // Pending from now, so settled() also waits for a start still looking up the shadows.
    const run = this.#start(call)
      .catch((err) =>
        this.ctx.log({ at: this.ctx.iso(), level: "error", msg: "shadow", error: String(err) })
      )
      .finally(() => this.#pending.delete(run));
    this.#pending.add(run);
  }

  async #start(call: ShadowCall): Promise<void> {
    const { tenant } = call;
    const shadows = await this.ctx.engine.shadows(tenant.id, call.generation);
    if (shadows.length === 0) return;
    if (this.#busy.has(tenant.id)) {
      for (const s of shadows) this.ctx.metrics.shadowed(tenant.id, s.name, "skipped");
      return;
    }
    this.#busy.add(tenant.id);
    try {
      await this.#run(call, shadows);
    } finally {
      this.#busy.delete(tenant.id);
    }
  }

  /** Resolves when the runs under way have finished (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  async #run(
    { tenant, event, live, served, decisionId }: ShadowCall,
    shadows: ShadowHook[],
  ): Promise<void> {
    const { store, metrics, iso } = this.ctx;
    const rows: ShadowRun[] = [];
    for (const { name, hook } of shadows) {
      let result: DispatchResult;
      try {
        result = await runMetered(this.ctx, tenant, withCandidate(served, hook), event);
      } catch (err) {
        if (err instanceof ApiError && err.status === 429) {
          metrics.shadowed(tenant.id, name, "skipped");
          continue;
        }
        throw err;
      }
      const differs = answerDiff(live, result);
      metrics.shadowed(tenant.id, name, differs === null ? "agreed" : "disagreed");
      rows.push({
        tenant_id: tenant.id,
        name,
        version: hook.version,
        decision_id: decisionId,
        at: iso(),
        agreed: differs === null,
        differs: differs as unknown as Record<string, unknown> | null,
      });
    }
    await store.appendShadowRuns?.(rows);
  }
}
