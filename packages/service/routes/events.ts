/**
 * Events: `POST /v1/events` (hookbox's own form) and `POST
 * /v1/agents/{agent}/events` (an agent CLI's HTTP hook). Each runs under
 * the tenant's quotas and one of its concurrency leases, and is answered
 * only once its audit row is committed.
 *
 * @module
 */
import { z } from "@hono/zod-openapi";
import type { DispatchResult } from "../../core/dispatch/result.ts";
import { clipped } from "../../core/runtime/failure.ts";
import type { ParseEventResult } from "../../core/schema/event.ts";
import { capturedText, redactedText } from "../replay.ts";
import { storable } from "../../core/schema/storable.ts";
import { lazyJsonPieces, printedLength, unreadBigChars } from "../../core/schema/lazy_json.ts";
import {
  type AgentAnswer,
  agentAnswer,
  AGENTS,
  isAgentName,
  passThrough,
} from "../../agents/adapters.ts";
import { closedGuard, mappedType, readHead, unreadableBlock } from "../../agents/unreadable.ts";
import { TenantGone } from "../audit.ts";
import { newId } from "../auth.ts";
import { INLINE_MATCHER_STEPS, type ServedHook } from "../engine.ts";
import { ApiError, apiErrorOf, storeUnavailable, tenantNotFound } from "../errors.ts";
import type { Quotas } from "../quota.ts";
import { readBody } from "../request.ts";
import {
  type AgentSource,
  type EventBody,
  eventBodyOf,
  type EventBodySource,
  readEventBodyLoaded,
} from "../event_body.ts";
import type { Context } from "hono";
import type { AuditRow, TenantRow } from "../../store/store.ts";
import type { ServiceContext } from "./context.ts";
import { LATE, within } from "../within.ts";
import type { Route } from "./route.ts";

/** Default event body cap when the tenant policy sets no `input_kb`. */
const DEFAULT_INPUT_KB = 1024;

/**
 * Wall time the hooks of an agent's event may take together, ms
 * (`Policy.eventTimeoutMs`): an agent lets the action through once its HTTP
 * hook times out (Copilot after 30 s), so a tenant's hooks run before a
 * platform guard must not outlast that; past it a closed guard blocks.
 */
export const AGENT_EVENT_MS = 15_000;

/**
 * Wall time an agent's call waits for its answer, ms, the key check included:
 * a store or server that stalls (a database paused, a lock held) must not hold
 * the call until the agent gives up on it and runs the action. Past it, the
 * agent's block where a closed guard applies. Above {@linkcode AGENT_EVENT_MS}
 * with room for the audit's commit; below `hookbox dispatch --remote`'s 20 s.
 */
export const AGENT_ANSWER_MS = 19_000;

/** The part of an agent call's `answerMs` its key check may take: 2 s at the default. */
export function keyCheckMs(answerMs: number): number {
  return Math.min(2_000, Math.ceil(answerMs / 8));
}

/**
 * Runs an event for `tenant` (answering `400` if it did not validate):
 * per-minute quotas, hooks, audit (committed first), metrics. The caller
 * holds the tenant's concurrency lease ({@linkcode leased}).
 */
async function dispatchFor(
  ctx: ServiceContext,
  tenant: TenantRow,
  parsed: ParseEventResult,
  dryRun: boolean,
  started: number,
  generation: number | undefined,
  timeLimitMs?: number,
): Promise<{ result: DispatchResult; decisionId: string }> {
  const { engine, quotas, audit, metrics, iso, now, log } = ctx;
  if (!parsed.ok) {
    const { code, message, field } = parsed.error;
    throw new ApiError(400, code, message, field ? { field } : {});
  }
  const settle = audit.expect();
  let result: DispatchResult;
  let served: ServedHook[];
  let fuel: Awaited<ReturnType<Quotas["reserveFuel"]>> = null;
  try {
    await quotas.count(tenant.id, tenant.policy, dryRun);
    served = await engine.hooks(tenant.id, generation);
    // fuel_per_minute: reserved before the run, so instances running together stay within it.
    fuel = dryRun ? null : await quotas.reserveFuel(
      tenant.id,
      tenant.policy,
      engine.fuelCeiling(tenant.policy, served),
    );
    result = await engine.dispatch(
      tenant.id,
      tenant.policy,
      served,
      parsed.event,
      fuel?.granted,
      timeLimitMs,
    );
    if (fuel !== null) {
      // Settled now, whatever the audit write does: the fuel was burnt.
      const used = result.hooks.reduce((sum, h) => sum + h.fuel, 0);
      await fuel.settle(used).catch((err) =>
        log({ at: iso(), level: "error", msg: "fuel charge failed", error: String(err) })
      );
    }
  } catch (err) {
    await fuel?.settle(0).catch(() => {});
    throw err;
  } finally {
    settle(); // the row follows synchronously: it is written below, or never
  }
  const decisionId = newId("dec", now());
  const row = auditRow(
    decisionId,
    tenant.id,
    iso(),
    parsed.event.session_id,
    result,
    served,
    dryRun,
  );
  const capture = tenant.policy.capture;
  if (capture !== undefined && !dryRun) {
    const kept = capturedText(parsed.event, capture);
    if (kept !== null) row.event = kept;
    metrics.captured(tenant.id, kept === null ? "too_large" : "kept");
  }
  try {
    row.tenant_created_at = tenant.created_at;
    await audit.write(row);
  } catch (err) {
    // Deleted while its event ran: nothing of it is kept, and there is no answer to give.
    if (err instanceof TenantGone) throw tenantNotFound(tenant.id);
    log({ at: iso(), level: "error", msg: "audit write failed", error: String(err) });
    throw storeUnavailable();
  }
  metrics.dispatched(tenant.id, result, (performance.now() - started) / 1000, dryRun);
  if (!dryRun) {
    // After the answer's row: a shadow version never changes, or waits for, the answer.
    ctx.shadows.start({
      tenant,
      event: parsed.event,
      live: result,
      served,
      decisionId,
      generation,
    });
  }
  if (ctx.decisionLog !== null) {
    try {
      // A capturing tenant's redactions hold in the decision log too.
      const redact = tenant.policy.capture?.redact ?? [];
      const event = !ctx.decisionLogEvents
        ? null
        : redact.length === 0
        ? parsed.event
        : JSON.parse(redactedText(parsed.event, redact));
      ctx.decisionLog(decisionEntry(row, result, event));
    } catch (err) {
      log({ at: iso(), level: "error", msg: "decision log", error: String(err) });
    }
  }
  return { result, decisionId };
}

/** The routes that run events. */
export function eventRoutes(ctx: ServiceContext): Route[] {
  const { engine, quotas, stops, iso } = ctx;
  return [
    {
      method: "post",
      path: "/v1/events",
      who: "tenant",
      generation: true,
      docs: (s) => ({
        summary: "Dispatch an event",
        query: z.object({ dry_run: z.enum(["0", "1", "true", "false"]).optional() }),
        body: s.eventBodySchema,
        ok: { status: 200, schema: s.dispatchAnswerSchema },
        extra: { 429: "QUOTA_EXCEEDED", 503: "STORE_UNAVAILABLE" },
      }),
      handler: async (c, { tenant, generation }) => {
        const started = performance.now();
        const dryRun = ["1", "true"].includes(c.req.query("dry_run") ?? "");
        return await leased(quotas, tenant, async () => {
          // Its text kept with it: a plugin worker is sent the text, not the object.
          const body = await eventBody(ctx, c, tenant);
          if (body.error !== null) throw body.error;
          const { result, decisionId } = await dispatchFor(
            ctx,
            tenant,
            body.parsed!,
            dryRun,
            started,
            generation,
          );
          c.set("decision_id" as never, decisionId as never);
          const answer = { ...result, decision_id: decisionId };
          // Hook output that came from the plugin worker as JSON bytes is copied in as it is:
          // nothing of it is decoded, escaped or encoded again on this thread. The rest of
          // the answer must be small enough to write here; else the codec writes it all.
          const chars = resultChars(result);
          const bytes = unreadBigChars([result]);
          if (bytes > 0 && chars - bytes < (ctx.eventCodec?.minBytes ?? Infinity)) {
            return ctx.held.json(c, tenant.id, lazyJsonPieces(answer));
          }
          return await jsonAnswer(ctx, c, tenant.id, answer, chars);
        });
      },
    },
    {
      method: "post",
      path: "/v1/agents/{agent}/events",
      who: "tenant",
      generation: true,
      lastKnown: true,
      docs: () => ({
        summary: "An agent CLI's HTTP hook: its payload in, its own answer out (docs/ADAPTERS.md)",
        params: { agent: z.enum(AGENTS) },
        query: z.object({
          event: z.string().optional(),
          form: z.enum(["http", "command"]).optional().openapi({
            description:
              "command: answer {exit_code, stdout, stderr}, what the command form prints " +
              "(used by `hookbox dispatch --agent NAME --remote URL`)",
          }),
        }),
        body: z.record(z.string(), z.unknown()).openapi("AgentPayload"),
        ok: { status: 200, schema: z.record(z.string(), z.unknown()).openapi("AgentAnswer") },
        extra: {
          404: "AGENT_UNKNOWN",
          429: "QUOTA_EXCEEDED",
          503: "STORE_UNAVAILABLE, or ANSWER_TOO_SLOW when the store or the server stalls",
        },
      }),
      // SPEC §8: the agent's payload in, its own answer out. The answer is the JSON the
      // command form prints (`{}` for no opinion); what the command form says with exit 2
      // alone is answered as the agent's JSON deny where it has one.
      handler: async (c, { tenant, generation, refused }) => {
        const started = performance.now();
        const agent = c.req.param("agent") ?? "";
        if (!isAgentName(agent)) {
          throw new ApiError(
            404,
            "AGENT_UNKNOWN",
            `no adapter for agent "${agent}"; one of ${AGENTS.join(", ")}`,
          );
        }
        const form = c.req.query("form") ?? "http";
        if (form !== "http" && form !== "command") {
          throw new ApiError(400, "REQUEST_INVALID", 'form must be "http" or "command"', {
            field: "form",
          });
        }
        // The command form: what `hookbox dispatch --agent` would print and exit with.
        const reply = async (answer: AgentAnswer) => {
          const { exitCode, stdout, stderr } = answer;
          const chars = stdout.length + stderr.length;
          if (form === "command") {
            const value = { exit_code: exitCode, stdout, stderr };
            return await jsonAnswer(ctx, c, tenant.id, value, chars);
          }
          // The agent's JSON as it is: one object, never parsed again here.
          if (stdout) return ctx.held.json(c, tenant.id, stdout);
          const value = exitCode === 2 ? { decision: "block", reason: stderr } : {};
          return await jsonAnswer(ctx, c, tenant.id, value, chars);
        };
        let text = "";
        // Set once the answer is past its deadline: the store may be what stalls.
        let stalled = false;
        // An agent lets the action through when its hook call gets no answer. SPEC §4.7: a
        // payload the service cannot evaluate is the agent's block where a closed hook of the
        // tenant's (or a platform hook) could apply; so is a call it cannot answer (over a
        // quota, the audit or the process unavailable, a fault: docs/ADAPTERS.md).
        const closedBlock = async (api: ApiError): Promise<Response | null> => {
          const unreadable = UNREADABLE.has(api.code);
          if (!unreadable && !REFUSALS.has(api.code)) return null;
          // The hooks as served now, else as last served (the store down or stalled: a
          // generation unknown, or the hooks not read within the key check's time).
          const last = () => engine.lastHooks(tenant.id);
          const now = stalled || generation === undefined || api.code === "STORE_UNAVAILABLE"
            ? LATE
            : await within(engine.hooks(tenant.id, generation), keyCheckMs(ctx.agentAnswerMs))
              .catch((): typeof LATE => LATE);
          const served = now === LATE ? last() : now;
          if (served === null) return null;
          const head = readHead(text);
          const name = c.req.query("event") || head.event;
          const type = mappedType(agent, name);
          if (name !== undefined && type === null && agent !== "agenthooks") return null;
          // On the thread that answers everyone: the tool matchers get the inline share of a
          // budget, and one it cannot answer fits (a block, for this tenant's own payload).
          const guard = closedGuard(served.map((h) => h.definition), type, head.tool, false, {
            left: INLINE_MATCHER_STEPS,
          });
          if (guard === null) return null;
          ctx.metrics.rejected(api.code);
          c.set("error_code" as never, api.code as never);
          const reason = `hookbox ${unreadable ? "cannot evaluate" : "could not answer"} this ${
            name ?? "event"
          }: ${api.code}: ${api.message}; hook "${guard.name}" guards it and fails closed`;
          return await reply(unreadableBlock(agent, name, reason, guard.name));
        };
        const answerCall = () =>
          leased(quotas, tenant, async () => {
            // Made into an event, its text kept with it: a plugin worker is sent the
            // text and makes the same event of it (the same timestamp too).
            const body = await eventBody(ctx, c, tenant, {
              name: agent,
              event: c.req.query("event") || undefined,
              at: iso(),
            });
            text = body.text;
            if (body.error !== null) throw body.error;
            const call = body.call!;
            const parsed = body.parsed;
            if (parsed === null) return await reply(passThrough(call));
            if (
              parsed.ok && parsed.event.event_type === "pre-agent-turn-stop" && agent !== "cursor"
            ) {
              // The stop budget, counted here: the agent says only whether this stop is a retry.
              const retry = call.input.stop_hook_active === true;
              const count = stops.next(tenant.id, agent, parsed.event.session_id, retry);
              body.source!.agent!.stopCount = count;
              parsed.event.stop_count = count;
            }
            const { result, decisionId } = await dispatchFor(
              ctx,
              tenant,
              parsed,
              false,
              started,
              generation,
              ctx.agentEventMs,
            );
            c.header("x-hookbox-decision-id", decisionId);
            c.set("decision_id" as never, decisionId as never);
            return await reply(agentAnswer(call, result));
          });
        if (refused !== undefined) {
          // Refused at the gate. The store cannot check the key: the tenant it last named,
          // and the hooks last served to it, say whether a closed guard could apply, from
          // the payload's event. Over what its requests may hold: the body is not read.
          // Nothing runs or is recorded.
          const api = refused instanceof ApiError ? refused : apiErrorOf(refused, ctx.log);
          if (api.code !== "QUOTA_EXCEEDED") {
            const source = { name: agent, event: c.req.query("event") || undefined, at: iso() };
            text = await eventBody(ctx, c, tenant, source).then((b) => b.text, () => "");
          }
          const blocked = await closedBlock(api).catch(() => null);
          if (blocked !== null) return blocked;
          throw api;
        }
        try {
          return await answeredWithin(
            answerCall(),
            ctx.agentAnswerMs,
            ctx.agentAnswerMs - keyCheckMs(ctx.agentAnswerMs) - (performance.now() - started),
            () => stalled = true,
            (late) => {
              ctx.log({
                at: iso(),
                level: "error",
                msg: "agent call answered too late",
                tenant: tenant.id,
                ...(late instanceof Response
                  ? { decision_id: late.headers.get("x-hookbox-decision-id") }
                  : { error: String(late) }),
              });
            },
          );
        } catch (err) {
          // Made an ApiError here (logged once), so the app's handler does not log it again.
          const api = err instanceof ApiError ? err : apiErrorOf(err, ctx.log);
          const blocked = await closedBlock(api).catch(() => null);
          if (blocked !== null) return blocked;
          throw api;
        }
      },
    },
  ];
}

/** Longest stderr of one hook a decision-log entry keeps. */
const DECISION_LOG_STDERR_CHARS = 4096;

/**
 * A decision-log entry: the audit row's facts, each hook's code, detail and
 * stderr (clipped), and the event when asked for.
 */
function decisionEntry(
  row: AuditRow,
  result: DispatchResult,
  event: unknown,
): Record<string, unknown> {
  return {
    decision_id: row.decision_id,
    tenant_id: row.tenant_id,
    at: row.at,
    session_id: row.session_id,
    event_type: row.event_type,
    decision: row.decision,
    reason: row.reason,
    blocked_by: row.blocked_by,
    dry_run: row.dry_run,
    hooks: result.hooks.map((h, i) => ({
      ...row.hooks[i],
      stderr: clipped(h.stderr, DECISION_LOG_STDERR_CHARS),
    })),
    ...(event === null ? {} : { event }),
  };
}

/**
 * Runs `fn` holding one of the tenant's `max_concurrent` leases, taken
 * before the request's body is read: a tenant at its limit is refused
 * (`429`) before its body costs this thread a parse. Per-minute refusals
 * come earlier still (`refuseEarly`).
 */
export async function leased<T>(
  quotas: Quotas,
  tenant: TenantRow,
  fn: () => Promise<T>,
): Promise<T> {
  quotas.refuseEarly(tenant.id, tenant.policy);
  const release = await quotas.lease(tenant.id, tenant.policy);
  try {
    return await fn();
  } finally {
    await release();
  }
}

const eventLimit = (tenant: TenantRow) => (tenant.policy.input_kb ?? DEFAULT_INPUT_KB) * 1024;

/**
 * The request's body made into its event: in place, or by the service's
 * event codec for a big body (`event_body.ts`).
 */
async function eventBody(
  ctx: ServiceContext,
  c: Context,
  tenant: TenantRow,
  agent?: AgentSource,
): Promise<EventBody> {
  const bytes = await readBody(c, eventLimit(tenant));
  const from: EventBodySource = agent === undefined
    ? { tenantId: tenant.id }
    : { tenantId: tenant.id, agent };
  const codec = ctx.eventCodec;
  if (codec === null || bytes.byteLength < codec.minBytes) {
    return await readEventBodyLoaded(bytes, from);
  }
  return eventBodyOf(await codec.read(bytes, from), tenant.id);
}

/**
 * Longest block reason an audit row keeps. The reason is what a hook printed
 * (up to its output cap, a megabyte by default): whole in every row, a hook
 * could make each of its tenant's events write a megabyte to the store every
 * tenant shares, on the thread that answers them (measured: 2.8 ms of that
 * thread per event). The answer still carries it whole.
 */
export const AUDIT_REASON_CHARS = 4096;

function auditRow(
  decisionId: string,
  tenantId: string,
  at: string,
  sessionId: string,
  result: DispatchResult,
  served: ServedHook[],
  dryRun: boolean,
): AuditRow {
  const byName = new Map(served.map((s) => [`${s.definition.level}:${s.definition.name}`, s]));
  return {
    decision_id: decisionId,
    tenant_id: tenantId,
    at,
    session_id: sessionId,
    event_type: result.event_type,
    decision: result.decision,
    // Hook output is kept storable, never refused: it is the hook's, not the request's.
    reason: result.reason === null ? null : storable(clipped(result.reason, AUDIT_REASON_CHARS)),
    blocked_by: result.blocked_by,
    dry_run: dryRun,
    hooks: result.hooks.map((h) => {
      const s = byName.get(`${h.level}:${h.name}`);
      return {
        name: h.name,
        level: h.level,
        version: s?.version ?? null,
        sha256: s?.sha256 ?? null,
        outcome: h.outcome,
        code: h.code,
        detail: h.detail === null ? null : storable(h.detail),
        duration_ms: h.duration_ms,
        fuel: h.fuel,
      };
    }),
  };
}

/**
 * Refusals that leave an agent's call unanswered (any error that is not an
 * `ApiError` counts too): on `/v1/agents/…` a closed hook that could apply
 * turns them into the agent's block.
 */
const REFUSALS = new Set([
  "QUOTA_EXCEEDED",
  "ANSWER_TOO_SLOW",
  "STORE_UNAVAILABLE",
  "OUT_OF_FILES",
  "SHUTTING_DOWN",
  "INTERNAL",
]);

/** Errors that mean the service could not evaluate an agent's payload (SPEC §4.7). */
const UNREADABLE = new Set([
  "BODY_TOO_LARGE",
  "BODY_TOO_SLOW",
  "BODY_UNREADABLE",
  "JSON_INVALID",
  "EVENT_INVALID",
  "EVENT_JSON_INVALID",
  "JSON_TOO_DEEP",
]);

/** Characters of text a result's answer carries in its reason and its hooks' output. */
function resultChars(result: DispatchResult): number {
  let chars = result.reason?.length ?? 0;
  for (const h of result.hooks) {
    chars += printedLength(h, "stdout") + printedLength(h, "stderr") + (h.detail?.length ?? 0);
  }
  return chars;
}

/**
 * `value` as a JSON answer: written in place, or by the service's event
 * codec when it carries at least its `minBytes` characters of text (a hook
 * that prints megabytes must not cost the thread answering every tenant the
 * milliseconds of writing them out).
 */
async function jsonAnswer(
  ctx: ServiceContext,
  c: Context,
  tenantId: string,
  value: unknown,
  chars: number,
): Promise<Response> {
  const codec = ctx.eventCodec;
  if (codec === null || chars < codec.minBytes) return ctx.held.value(c, tenantId, value);
  return ctx.held.json(c, tenantId, await codec.write(tenantId, value));
}

/**
 * `answer`, or past `ms` the `503 ANSWER_TOO_SLOW` (after `onStall`), which
 * names the call's whole deadline, `totalMs`. What the late answer ends with
 * goes to `onLate` (its decision, if one was made, is audited but never
 * sent), its body cancelled so that nothing stays counted.
 */
async function answeredWithin(
  answer: Promise<Response>,
  totalMs: number,
  ms: number,
  onStall: () => void,
  onLate: (late: Response | unknown) => void,
): Promise<Response> {
  const found = await within(answer, ms);
  if (found !== LATE) return found;
  onStall();
  answer.then((response) => {
    response.body?.cancel().catch(() => {});
    onLate(response);
  }, onLate);
  throw new ApiError(
    503,
    "ANSWER_TOO_SLOW",
    `the answer was not ready within ${
      Math.round(totalMs / 100) / 10
    } s: the store or the server is stalled`,
    { retryAfter: 1 },
  );
}
