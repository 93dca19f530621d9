/**
 * The zod schemas of the service's requests and answers (SPEC §6). The same
 * schemas validate requests and generate `GET /openapi.json`.
 *
 * @module
 */
import { z } from "@hono/zod-openapi";
import { ERROR_CODES } from "../core/errors.ts";
import { MAX_SESSION_ID } from "../core/schema/event.ts";
import { EVENT_TYPES } from "../core/schema/event_types.ts";

/** Most items one `POST /v1/audit/ingest` takes. */
export const MAX_INGEST_ITEMS = 1000;

/** Every schema of the service, built at first use (see {@linkcode serverSchemas}). */
function build() {
  /** Tenant and key ids. */
  const idSchema = z.string().regex(
    /^[a-z0-9][a-z0-9-]{0,62}$/,
    "must match ^[a-z0-9][a-z0-9-]{0,62}$",
  );

  /** Hook names (SPEC §2). */
  const hookNameSchema = z.string().regex(
    /^[a-z0-9-]{1,64}$/,
    "must match [a-z0-9-]+, at most 64",
  );

  const positive = z.number().int().positive();

  /** A tenant policy: every field optional (SPEC §6 "Fixed details"). */
  const policySchema = z.strictObject({
    max_memory_mb: positive.max(4096).optional(),
    max_fuel: positive.max(1e15).optional(),
    max_output_kb: positive.max(1 << 20).optional(),
    max_timeout_ms: positive.max(600_000).optional(),
    input_kb: positive.max(1 << 16).optional(),
    module_kb: positive.max(1 << 16).optional(),
    allowed_hosts: z.array(z.string().min(1).max(253)).max(256).optional(),
    max_concurrent: positive.max(1_000_000).optional(),
    events_per_minute: positive.max(1e12).optional(),
    // An integer JSON number: at most 2^53 - 1 (zod's int(), and what a double holds exactly).
    fuel_per_minute: positive.max(Number.MAX_SAFE_INTEGER).optional(),
    audit_retention_days: positive.max(36_500).optional(),
    capture: z.strictObject({
      max_event_kb: positive.max(1024).optional(),
      redact: z.array(z.string().min(1).max(128)).max(64).optional(),
      retention_days: positive.max(365).optional(),
    }).openapi("CapturePolicy").optional(),
  }).openapi("Policy");

  const tenantCreateSchema = z.strictObject({
    id: idSchema,
    policy: policySchema.optional(),
  }).openapi("TenantCreate");

  const tenantSchema = z.object({
    id: z.string(),
    policy: policySchema,
    created_at: z.string(),
  }).openapi("Tenant");

  const keyCreateSchema = z.strictObject({
    name: z.string().min(1).max(100).optional(),
  }).openapi("KeyCreate");

  const keyCreatedSchema = z.object({ id: z.string(), key: z.string() }).openapi("KeyCreated");

  /** A key as an admin sees it: never the key or its hash. */
  const keyInfoSchema = z.object({
    id: z.string(),
    name: z.string().nullable(),
    created_at: z.string(),
    revoked_at: z.string().nullable(),
  }).openapi("KeyInfo");

  /**
   * `PATCH /v1/tenants/{id}/policy`: the fields to change (JSON merge patch,
   * RFC 7396): a field given is set, `null` removes it, others stay.
   */
  const policyPatchSchema = z.strictObject(
    Object.fromEntries(
      Object.entries(policySchema.shape).map(([name, field]) => [
        name,
        (field as z.ZodOptional<z.ZodType>).unwrap().nullable().optional(),
      ]),
    ),
  ).openapi("PolicyPatch");

  const fileValue = z.union([
    z.string(),
    z.strictObject({ base64: z.string() }),
  ]);

  /** A hook folder as JSON: relative path → UTF-8 text or `{base64}`. */
  const uploadSchema = z.strictObject({
    files: z.record(z.string(), fileValue),
  }).openapi("HookUpload");

  const uploadedSchema = z.object({
    name: z.string(),
    version: z.number().int(),
    sha256: z.string(),
    runtime: z.enum(["wasm", "prompt"]),
    size_bytes: z.number().int(),
    enabled: z.boolean(),
    built_from: z.string(),
    active: z.boolean().openapi({ description: "false for a staged version (?stage=1)" }),
  }).openapi("HookUploaded");

  const hookTestReportSchema = z.object({
    name: z.string(),
    version: z.number().int(),
    passed: z.boolean().openapi({ description: "every case passed (false when there are none)" }),
    cases: z.array(z.object({
      file: z.string(),
      passed: z.boolean(),
      failures: z.array(z.string()),
    })),
  }).openapi("HookTestReport");

  const hookItemSchema = z.object({
    name: z.string(),
    level: z.enum(["platform", "tenant"]),
    version: z.number().int(),
    trigger: z.array(z.string()),
    priority: z.number(),
    enabled: z.boolean(),
    sha256: z.string(),
  }).openapi("HookItem");

  const hookDetailSchema = hookItemSchema.extend({
    runtime: z.enum(["wasm", "prompt"]),
    size_bytes: z.number().int(),
    built_from: z.string(),
    files: z.record(z.string(), z.string()).describe("uploaded path → SHA-256 of its bytes"),
    versions: z.array(
      z.object({ version: z.number().int(), sha256: z.string(), created_at: z.string() }),
    ),
  }).openapi("HookDetail");

  const patchSchema = z.strictObject({ enabled: z.boolean() }).openapi("HookPatch");
  const rollbackSchema = z.strictObject({ version: z.number().int().positive() }).openapi(
    "HookRollback",
  );

  const auditQuerySchema = z.object({
    session_id: z.string().max(256).optional(),
    event_type: z.enum(EVENT_TYPES).optional(),
    hook: z.string().max(64).optional(),
    outcome: z.enum(["ok", "block", "error", "timeout", "limit", "skipped", "async"]).optional(),
    decision: z.enum(["allow", "block"]).optional(),
    since: z.iso.datetime({ offset: true }).optional(),
    limit: z.coerce.number().int().min(1).max(1000).default(50),
    cursor: z.string().max(100).optional(),
  });

  /** `POST /v1/hooks/{name}/versions/{version}/replay`. */
  const replayQuerySchema = z.object({
    since: z.iso.datetime({ offset: true }).optional(),
    limit: z.coerce.number().int().min(1).max(200).default(50),
    cursor: z.string().max(100).optional(),
  });

  /** What an answer was, in a replay's or a shadow's comparison. */
  const answerSummarySchema = z.object({
    decision: z.string(),
    reason: z.string().nullable(),
    blocked_by: z.string().nullable(),
  }).openapi("AnswerSummary");

  /** How a candidate's answer to one event differs from the active chain's. */
  const answerDiffSchema = z.object({
    event_type: z.string(),
    changed: z.array(z.string()),
    active: answerSummarySchema,
    candidate: answerSummarySchema,
  }).openapi("AnswerDiff");

  const replayReportSchema = z.object({
    name: z.string(),
    version: z.number().int(),
    capturing: z.boolean(),
    examined: z.number().int(),
    skipped: z.number().int(),
    changed: z.array(answerDiffSchema.extend({ decision_id: z.string(), at: z.string() })),
    next_cursor: z.string().nullable(),
  }).openapi("ReplayReport");

  const shadowSetSchema = z.strictObject({ version: positive }).openapi("ShadowSet");

  const shadowQuerySchema = z.object({
    limit: z.coerce.number().int().min(1).max(200).default(50),
    cursor: z.string().max(100).optional(),
  });

  const shadowReportSchema = z.object({
    shadow: z.object({ name: z.string(), version: z.number().int(), started_at: z.string() })
      .nullable(),
    runs: z.number().int(),
    agreed: z.number().int(),
    kept: z.number().int(),
    disagreements: z.array(z.object({
      version: z.number().int(),
      decision_id: z.string(),
      at: z.string(),
      differs: answerDiffSchema.nullable(),
    })),
    next_cursor: z.string().nullable(),
  }).openapi("ShadowReport");

  const auditHookSchema = z.object({
    name: z.string(),
    level: z.string(),
    version: z.number().int().nullable(),
    sha256: z.string().nullable(),
    outcome: z.string(),
    code: z.string().nullable().optional(),
    detail: z.string().nullable(),
    duration_ms: z.number(),
    fuel: z.number(),
  });

  const auditItemSchema = z.object({
    decision_id: z.string(),
    at: z.string(),
    session_id: z.string(),
    event_type: z.string(),
    decision: z.string(),
    reason: z.string().nullable(),
    blocked_by: z.string().nullable(),
    dry_run: z.boolean(),
    hooks: z.array(auditHookSchema),
  }).openapi("AuditItem");

  /** `POST /v1/audit/ingest` (admin): audit items of edge Workers, each naming its tenant. */
  const auditIngestSchema = z.object({
    items: z.array(
      auditItemSchema.extend({
        decision_id: z.string().min(1).max(100),
        tenant_id: idSchema,
        at: z.iso.datetime({ offset: true }),
        session_id: z.string().max(MAX_SESSION_ID),
        event_type: z.string().max(100),
        decision: z.enum(["allow", "block"]),
        reason: z.string().max(64 * 1024).nullable(),
        blocked_by: z.string().max(200).nullable(),
        hooks: z.array(auditHookSchema), // as many as a tenant and the platform have: the body bounds it
        // The event, when its tenant captures events (docs/replay.md): kept for replay.
        event: z.string().max(1024 * 1024).optional(),
      }).strict(),
    ).min(1).max(MAX_INGEST_ITEMS),
  }).strict().openapi("AuditIngest");

  const auditIngestAnswerSchema = z.object({ accepted: z.number().int() })
    .openapi("AuditIngestAnswer");

  const auditPageSchema = z.object({
    items: z.array(auditItemSchema),
    next_cursor: z.string().nullable(),
  }).openapi("AuditPage");

  /** `GET /v1/audit/all` (admin): every tenant's items, each naming its tenant. */
  const auditAllPageSchema = z.object({
    items: z.array(auditItemSchema.extend({ tenant_id: z.string() })),
    next_cursor: z.string().nullable(),
  }).openapi("AuditAllPage");

  /** One list of codes (packages/core/errors.ts, docs/errors.md). */
  const errorCodeSchema = z.enum(ERROR_CODES).openapi("ErrorCode");
  const errorSchema = z.object({
    error: z.object({
      code: errorCodeSchema,
      message: z.string(),
      field: z.string().optional(),
      problems: z.array(z.object({
        code: errorCodeSchema,
        path: z.string().nullable(),
        field: z.string().nullable(),
        message: z.string(),
      })).optional(),
    }),
  }).openapi("Error");

  /** The event body of `POST /v1/events` (validated in full by the event schema, SPEC §1). */
  const eventBodySchema = z.object({ event_type: z.string(), session_id: z.string() })
    .passthrough().openapi("Event");

  /** The answer of `POST /v1/events`: SPEC §4's result plus `decision_id`. */
  const dispatchAnswerSchema = z.object({
    decision_id: z.string(),
    event_type: z.string(),
    decision: z.enum(["allow", "block"]),
    reason: z.string().nullable(),
    blocked_by: z.string().nullable(),
    modified_input: z.unknown(),
    modified_output: z.unknown(),
    inject: z.array(z.unknown()),
    disable_tools: z.array(z.string()),
    enable_tools: z.array(z.string()),
    store: z.record(z.string(), z.unknown()),
    hooks: z.array(z.record(z.string(), z.unknown())),
  }).openapi("DispatchResult");
  return {
    idSchema,
    hookNameSchema,
    policySchema,
    tenantCreateSchema,
    tenantSchema,
    keyCreateSchema,
    keyCreatedSchema,
    keyInfoSchema,
    hookTestReportSchema,
    policyPatchSchema,
    uploadSchema,
    uploadedSchema,
    hookItemSchema,
    hookDetailSchema,
    patchSchema,
    rollbackSchema,
    auditQuerySchema,
    replayQuerySchema,
    replayReportSchema,
    shadowSetSchema,
    shadowQuerySchema,
    shadowReportSchema,
    auditItemSchema,
    auditIngestSchema,
    auditIngestAnswerSchema,
    auditPageSchema,
    auditAllPageSchema,
    errorSchema,
    eventBodySchema,
    dispatchAnswerSchema,
  };
}

/** The service's schemas by name. */
export type ServerSchemas = ReturnType<typeof build>;

let built: ServerSchemas | null = null;

/**
 * The service's schemas, built at their first use: an edge Worker that
 * answers only `POST /v1/events` and `GET /healthz` never builds them, and a
 * service builds them once, at its first request that validates a body.
 */
export function serverSchemas(): ServerSchemas {
  return built ??= build();
}
