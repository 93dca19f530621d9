/**
 * The service's storage, behind one interface with two implementations
 * (`packages/store-sqlite/sqlite.ts`, embedded; `packages/store-postgres/postgres.ts`) that pass one
 * shared test suite. Everything is asynchronous so either can sit behind it.
 *
 * Platform hooks are stored under the tenant id {@linkcode PLATFORM} (the
 * empty string, which no tenant id can be).
 *
 * @module
 */
import type { Manifest } from "../core/schema/manifest.ts";

/** Tenant id under which platform hooks are stored. */
export const PLATFORM = "";

/** A tenant's policy (SPEC §6 "Fixed details"); every field optional. */
export interface TenantPolicy {
  /** Ceiling on a hook's `limits.memory_mb`. */
  max_memory_mb?: number | undefined;
  /** Ceiling on a hook's `limits.fuel`. */
  max_fuel?: number | undefined;
  /** Ceiling on a hook's `limits.output_kb`. */
  max_output_kb?: number | undefined;
  /** Ceiling on a hook's `timeout`. */
  max_timeout_ms?: number | undefined;
  /** Largest event body, KiB. */
  input_kb?: number | undefined;
  /** Largest plugin module, KiB. */
  module_kb?: number | undefined;
  /** Hosts the tenant's hooks may reach. */
  allowed_hosts?: string[] | undefined;
  /** Dispatches running at once. */
  max_concurrent?: number | undefined;
  /** Dispatches per minute. */
  events_per_minute?: number | undefined;
  /** Fuel per minute, summed over dispatches. */
  fuel_per_minute?: number | undefined;
  /** Days audit rows are kept. */
  audit_retention_days?: number | undefined;
  /** Event capture for replay (docs/replay.md); absent: events are not kept. */
  capture?: CapturePolicy | undefined;
}

/** A tenant's event capture: which events are kept for replay, and for how long. */
export interface CapturePolicy {
  /** Events larger than this (KiB of JSON) are not kept. @default 64 */
  max_event_kb?: number | undefined;
  /** Keys whose values are replaced by `"[redacted]"` wherever they appear in a kept event. */
  redact?: string[] | undefined;
  /** Days captured events are kept. @default 7 */
  retention_days?: number | undefined;
}

/** A tenant. */
export interface TenantRow {
  /** The tenant id. */
  id: string;
  /** Its policy. */
  policy: TenantPolicy;
  /** RFC 3339. */
  created_at: string;
}

/** A stored API key (only its hash). */
/** A key as an admin sees it (`GET /v1/tenants/{id}/keys`): never its hash. */
export interface KeyInfo {
  /** The key id. */
  id: string;
  /** Its label. */
  name: string | null;
  /** When it was made (RFC 3339). */
  created_at: string;
  /** When it was revoked, or null while it works. */
  revoked_at: string | null;
}

/** An API key as stored. */
export interface KeyRow {
  /** The key id. */
  id: string;
  /** Its tenant. */
  tenant_id: string;
  /** Its label. */
  name: string | null;
  /** Hex SHA-256 of the key. */
  hash: string;
  /** When it was made (RFC 3339). */
  created_at: string;
}

/** How an uploaded hook runs. */
export type StoredRuntime = "wasm" | "prompt";

/** One stored version of a hook. */
export interface HookVersionRow {
  /** Version number, from 1. */
  version: number;
  /** SHA-256 of the plugin that runs (of HOOK.md for a prompt hook). */
  sha256: string;
  /** The runtime that runs it. */
  runtime: StoredRuntime;
  /** Size of the plugin (or prompt) in bytes. */
  size_bytes: number;
  /** The validated frontmatter. */
  manifest: Manifest;
  /** The Markdown body of HOOK.md. */
  body: string;
  /** What the upload built from: `wasm`, `js`, `as`, or `prompt`. */
  built_from: string;
  /** The uploaded folder: relative path → SHA-256 of the file, each stored as a blob. */
  sources: Record<string, string>;
  /** When it was uploaded (RFC 3339). */
  created_at: string;
}

/** A hook with its active version. */
export interface HookRow extends HookVersionRow {
  /** Its tenant (`""` for platform hooks). */
  tenant_id: string;
  /** The hook name. */
  name: string;
  /** Whether it runs. */
  enabled: boolean;
}

/** What names a hook's active version: enough to tell whether it changed. */
export type HookHead = Pick<
  HookRow,
  "tenant_id" | "name" | "enabled" | "version" | "sha256" | "created_at"
>;

/** A hook as `GET /v1/hooks` lists it: its head and manifest, not its body or files. */
export type HookItem =
  & Pick<HookRow, "tenant_id" | "name" | "enabled" | "version" | "sha256">
  & { manifest: Pick<Manifest, "trigger" | "priority"> };

/** A hook with all its versions, oldest first. */
export interface HookDetail extends HookRow {
  /** Every version, oldest first. */
  versions: Array<Pick<HookVersionRow, "version" | "sha256" | "created_at">>;
}

/** What a new version needs; the store numbers it. */
export type NewHookVersion = Omit<HookVersionRow, "version"> & {
  /** Bytes the version holds in the store: its plugin plus every uploaded file. @default 0 */
  stored_bytes?: number;
  /**
   * A tenant's storage caps, checked in the transaction that stores the
   * version (so concurrent uploads, on one instance or many, cannot pass
   * them), and the tenant it is for: a tenant deleted, or deleted and made
   * again, since the upload began gets nothing. Absent for platform hooks.
   */
  caps?: StorageCaps;
  /**
   * Stored but not made active (a staged version, to test before a rollback
   * makes it active): the hook must exist. The answer is then that version.
   */
  stage?: boolean;
};

/** See {@linkcode NewHookVersion.caps}. */
export interface StorageCaps {
  /** Most hooks the tenant may hold. */
  hooks: number;
  /** Most bytes its stored versions may hold. */
  bytes: number;
  /** The tenant's `created_at` when the upload began. */
  tenantCreatedAt: string;
}

/** The store failed to answer; the request may be retried (`503 STORE_UNAVAILABLE`). */
export class StoreUnavailable extends Error {
  /** A failure of the store, with what caused it. */
  constructor(cause: unknown) {
    super(`store unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
    this.name = "StoreUnavailable";
  }
}

/** Why a store refused to add a version (see {@linkcode NewHookVersion.caps}). */
export class VersionRefused extends Error {
  /** Always `VersionRefused`. */
  override name = "VersionRefused";
  /** A refusal with its code and message. */
  constructor(
    readonly code: "HOOK_TOO_MANY" | "HOOK_FILE_TOO_LARGE" | "TENANT_GONE" | "HOOK_NOT_FOUND",
    message: string,
  ) {
    super(message);
  }
}

/** The refusal of a version whose tenant holds `hooks` hooks and `bytes` bytes, or null. */
export function capsRefusal(
  caps: StorageCaps,
  state: { createdAt: string | null; hooks: number; known: boolean; bytes: number },
  adding: number,
): VersionRefused | null {
  if (state.createdAt !== caps.tenantCreatedAt) {
    return new VersionRefused("TENANT_GONE", "the tenant was deleted while the upload ran");
  }
  if (!state.known && state.hooks >= caps.hooks) {
    return new VersionRefused(
      "HOOK_TOO_MANY",
      `the tenant has ${state.hooks} hooks, at most ${caps.hooks}; delete one first`,
    );
  }
  if (state.bytes + adding > caps.bytes) {
    return new VersionRefused(
      "HOOK_FILE_TOO_LARGE",
      `the tenant's hooks hold ${state.bytes} bytes; with this upload they would pass the ` +
        `${caps.bytes}-byte quota; delete hooks first`,
    );
  }
  return null;
}

/** One hook's line in an audit item (SPEC §6). */
export interface AuditHook {
  /** The hook's name. */
  name: string;
  /** Its level (`platform` or `tenant`). */
  level: string;
  /** Its version, when stored. */
  version: number | null;
  /** SHA-256 of its plugin. */
  sha256: string | null;
  /** How the call ended. */
  outcome: string;
  /** The stable failure code (docs/errors.md) of a failed or skipped call; absent in rows stored before it was kept. */
  code?: string | null | undefined;
  /** The cause of a failure. */
  detail: string | null;
  /** Wall time, ms. */
  duration_ms: number;
  /** Fuel burnt. */
  fuel: number;
}

/** Blobs over this many bytes are stored (and read) in parts of at most this many. */
export const BLOB_PART_BYTES = 1024 * 1024;

/** An audit item (SPEC §6), plus the tenant it belongs to. */
export interface AuditRow {
  /** Unique id of the decision. */
  decision_id: string;
  /** The tenant. */
  tenant_id: string;
  /** When it was decided (RFC 3339). */
  at: string;
  /** The agent session. */
  session_id: string;
  /** The event type. */
  event_type: string;
  /** `allow` or `block`. */
  decision: string;
  /** Why it blocked. */
  reason: string | null;
  /** The hook that blocked. */
  blocked_by: string | null;
  /** Run with `dry_run=1`. */
  dry_run: boolean;
  /** One line per hook. */
  hooks: AuditHook[];
  /**
   * The tenant's `created_at` when the event arrived (not stored): a row
   * whose tenant was deleted (or deleted and made again) since is refused,
   * in the same transaction as the rows it travels with.
   */
  tenant_created_at?: string;
  /**
   * The event as JSON text, when the tenant captures events (stored apart
   * from the row, with its own retention, in the same transaction).
   */
  event?: string | undefined;
}

/** A captured event (`AuditRow.event`), as replay reads it. */
export interface CapturedEvent {
  /** The decision it was answered with. */
  decision_id: string;
  /** When (RFC 3339). */
  at: string;
  /** Its event type. */
  event_type: string;
  /** The event as JSON text (redacted as the policy said when it was kept). */
  event: string;
  /** The cursor of the page that starts after this event. */
  cursor: string;
}

/** What {@linkcode Store.readCaptures} reads: a tenant's captured events, oldest first. */
export interface CaptureQuery {
  /** The tenant. */
  tenant_id: string;
  /** RFC 3339 (UTC, as stored); events at or after it. */
  since?: string | undefined;
  /** Opaque: the position after which to continue (oldest first). */
  cursor?: string | undefined;
  /** Events per page. */
  limit: number;
  /** Most bytes of event text in one page (at least one event). */
  bytes: number;
}

/** A page of captured events, oldest first. */
export interface CapturePage {
  /** The events. */
  items: CapturedEvent[];
  /** Where the next page starts, or null at the newest. */
  next_cursor: string | null;
}

/** A version running in shadow beside a hook's active one. */
export interface ShadowState {
  /** The hook. */
  name: string;
  /** The version in shadow. */
  version: number;
  /** When the shadow began (RFC 3339). */
  started_at: string;
}

/** One live event the shadow version also ran on. */
export interface ShadowRun {
  /** The tenant. */
  tenant_id: string;
  /** The hook. */
  name: string;
  /** The version in shadow. */
  version: number;
  /** The live decision it ran beside. */
  decision_id: string;
  /** When (RFC 3339). */
  at: string;
  /** Whether the shadow answer matched the live one. */
  agreed: boolean;
  /** For a disagreement: what differed (bounded JSON), else null. */
  differs: Record<string, unknown> | null;
}

/** Disagreements one shadow keeps; past them its runs are counted, not kept. */
export const MAX_SHADOW_DISAGREEMENTS = 10_000;

/** A shadow's disagreements, newest first, with its totals. */
export interface ShadowReport {
  /** The shadow, or null when none runs. */
  shadow: ShadowState | null;
  /** Live events it ran on since it began. */
  runs: number;
  /** Of those, answered the same. */
  agreed: number;
  /** Disagreements kept (the first {@linkcode MAX_SHADOW_DISAGREEMENTS}; the rest are counted). */
  kept: number;
  /** Disagreements, newest first. */
  disagreements: Array<Omit<ShadowRun, "tenant_id" | "name" | "agreed">>;
  /** Where the next page of disagreements starts, or null. */
  next_cursor: string | null;
}

/** Filters of `GET /v1/audit`. */
export interface AuditQuery {
  /** The tenant whose rows are read; null reads every tenant's (items then carry `tenant_id`). */
  tenant_id: string | null;
  /** Only this session. */
  session_id?: string | undefined;
  /** Only this event type. */
  event_type?: string | undefined;
  /** Only rows where this hook ran. */
  hook?: string | undefined;
  /** Only rows where a hook ended so. */
  outcome?: string | undefined;
  /** Only this decision. */
  decision?: string | undefined;
  /** RFC 3339; items at or after it. */
  since?: string | undefined;
  /** Rows per page. */
  limit: number;
  /** Opaque: the position after which to continue (newest first). */
  cursor?: string | undefined;
  /**
   * With any filter, the most rows one read looks at (the newest below
   * `cursor`), so a filter that matches little costs a bounded scan rather
   * than one through every row of the tenant. A page may then hold fewer
   * than `limit` items, or none, and still have a `next_cursor` to go on
   * from. @default no bound
   */
  scan?: number | undefined;
  /**
   * The most bytes of stored text (hooks, reason, session) one page carries;
   * past it the page ends early (it always holds at least one item) with a
   * `next_cursor`. A tenant with a thousand hooks writes rows of a hundred
   * kilobytes or more, and a thousand of them in one page would be decoded
   * and encoded on the thread that answers every tenant. @default no bound
   */
  bytes?: number | undefined;
}

/** A page of audit items, newest first. */
export interface AuditPage {
  /** Rows, newest first (with `tenant_id` when every tenant's were read). */
  items: Array<Omit<AuditRow, "tenant_id"> & { tenant_id?: string }>;
  /** Where the next page starts, or null. */
  next_cursor: string | null;
}

/** The capture and shadow methods a store that keeps events has (both stores here). */
export type ReplayMethods = Required<
  Pick<
    Store,
    | "readCaptures"
    | "pruneCaptures"
    | "setShadow"
    | "listShadows"
    | "appendShadowRuns"
    | "readShadow"
  >
>;

/** What `rollback` found. */
export type RollbackResult = "ok" | "no-hook" | "no-version";

/** The service's storage. Methods reject only when the store itself fails. */
export interface Store {
  /** Which implementation: `sqlite` or `postgres`. */
  readonly kind: string;
  /** Runs pending schema migrations (idempotent; safe for concurrent starts). */
  migrate(): Promise<void>;
  /** Rejects when the store cannot be reached. */
  ping(): Promise<void>;
  /** Releases connections. */
  close(): Promise<void>;

  /** Creates a tenant; false when the id is taken. */
  createTenant(row: TenantRow): Promise<boolean>;
  /** One tenant, or null. */
  getTenant(id: string): Promise<TenantRow | null>;
  /** Every tenant, by id. */
  listTenants(): Promise<TenantRow[]>;
  /** Deletes the tenant with its keys, hooks and audit. */
  deleteTenant(id: string): Promise<boolean>;
  /** Replaces a tenant's policy; false when it does not exist. */
  setPolicy(id: string, policy: TenantPolicy): Promise<boolean>;

  /** Stores a key (hashed). */
  createKey(row: KeyRow): Promise<void>;
  /** Revokes a key of `tenantId`; false when there is none. */
  revokeKey(tenantId: string, keyId: string): Promise<boolean>;
  /** The live key with this hash. */
  findKey(hash: string): Promise<KeyRow | null>;
  /** Hashes of a tenant's live keys (edge bundles carry them). */
  liveKeyHashes(tenantId: string): Promise<string[]>;
  /** A tenant's keys, live and revoked, oldest first; never their hashes. */
  listKeys(tenantId: string): Promise<KeyInfo[]>;
  /** The tenant of the live key with this hash (one query: every request asks). */
  tenantForKey(hash: string): Promise<TenantRow | null>;

  /**
   * Stores bytes under their SHA-256 (when present, only marks them stored
   * now, so a sweep running meanwhile spares them). Bytes over
   * {@linkcode BLOB_PART_BYTES} are written a part at a time, each its own
   * write, with a turn of the loop in between on a store that writes on the
   * calling thread: a 64 MiB upload never holds that thread for its whole write.
   */
  putBlob(sha256: string, bytes: Uint8Array): Promise<void>;
  /** A stored plugin or source by SHA-256, or null. */
  getBlob(sha256: string): Promise<Uint8Array | null>;
  /**
   * Deletes the blobs no hook version refers to (as its plugin or as one of
   * its uploaded files) that were stored before `before` (ms since the
   * epoch); returns how many.
   */
  sweepBlobs(before: number): Promise<number>;
  /** Bytes a tenant's stored hook versions hold (see `NewHookVersion.stored_bytes`). */
  storedBytes(tenantId: string): Promise<number>;
  /**
   * Deletes a hook's oldest versions past the newest `keep`, never the
   * active one; returns how many.
   */
  pruneVersions(tenantId: string, name: string, keep: number): Promise<number>;

  /** Adds a version (numbered max + 1), makes it active and the hook enabled. */
  addHookVersion(tenantId: string, name: string, version: NewHookVersion): Promise<HookRow>;
  /** A tenant's hooks (or the platform's), name order. */
  listHooks(tenantId: string): Promise<HookRow[]>;
  /**
   * A tenant's hooks as {@linkcode listHooks} lists them but without what
   * their versions hold (manifest, body), which a caller that has the version
   * already need not read again; {@linkcode activeHook} reads one whole.
   * Optional: a store without it is listed whole.
   */
  listHookHeads?(tenantId: string): Promise<HookHead[]>;
  /**
   * A tenant's hooks with their manifests' `trigger` and `priority` only, not
   * their bodies or files (`GET /v1/hooks`: a tenant with a thousand prompt
   * hooks of 60 KiB made each listing read 60 MB on the thread that answers
   * every tenant, and parsing a thousand manifests of 16 KiB took 25 ms
   * there). Optional: a store without it is listed whole.
   */
  listHookItems?(tenantId: string): Promise<HookItem[]>;
  /** One hook's active version, whole, or null. */
  activeHook?(tenantId: string, name: string): Promise<HookRow | null>;
  /** Version `version` of a hook (active or not), with the hook's `enabled`; null if none. */
  getVersion(tenantId: string, name: string, version: number): Promise<HookRow | null>;
  /** One hook with its versions, or null. */
  getHook(tenantId: string, name: string): Promise<HookDetail | null>;
  /** Enables or disables a hook; null when it does not exist. */
  setEnabled(tenantId: string, name: string, enabled: boolean): Promise<HookRow | null>;
  /** Makes `version` active. */
  rollback(tenantId: string, name: string, version: number): Promise<RollbackResult>;
  /** Deletes a hook with its versions; false when it does not exist. */
  deleteHook(tenantId: string, name: string): Promise<boolean>;
  /**
   * A number that changes whenever any hook changes (upload, enable,
   * rollback, delete), in any process on this store: hook caches key on it.
   */
  hooksGeneration(): Promise<number>;

  /**
   * Appends audit rows in one transaction. A row whose `decision_id` is
   * already stored is skipped, so a batch sent twice is stored once. Returns
   * the decision ids of rows not stored because their tenant is gone (see
   * `AuditRow.tenant_created_at`).
   */
  appendAudit(rows: AuditRow[]): Promise<string[]>;
  /** A page of audit rows. */
  readAudit(query: AuditQuery): Promise<AuditPage>;
  /** Deletes a tenant's audit rows older than `before` (RFC 3339); returns how many. */
  pruneAudit(tenantId: string, before: string): Promise<number>;
  /** How many audit rows a tenant has (tests and the load script). */
  countAudit(tenantId: string): Promise<number>;

  /**
   * A page of the tenant's captured events (`AuditRow.event`), oldest first.
   * This and the shadow methods below are absent in a store that keeps no
   * events (an edge bundle): replay and shadow answer `501` there.
   */
  readCaptures?(query: CaptureQuery): Promise<CapturePage>;
  /** Deletes a tenant's captured events older than `before` (RFC 3339); returns how many. */
  pruneCaptures?(tenantId: string, before: string): Promise<number>;
  /**
   * Runs `version` of a hook in shadow (null stops it); a new shadow starts
   * with no runs. Changes the hooks generation. False when there is no such
   * hook (or version).
   */
  setShadow?(tenantId: string, name: string, version: number | null, at: string): Promise<boolean>;
  /** The tenant's shadows. */
  listShadows?(tenantId: string): Promise<ShadowState[]>;
  /**
   * Counts shadow runs and keeps the disagreements, at most
   * {@linkcode MAX_SHADOW_DISAGREEMENTS} per shadow (later ones are counted
   * only); runs of a shadow since stopped or replaced are dropped.
   */
  appendShadowRuns?(rows: ShadowRun[]): Promise<void>;
  /** A hook's shadow with its totals and a page of disagreements. */
  readShadow?(
    tenantId: string,
    name: string,
    page: { limit: number; cursor?: string | undefined },
  ): Promise<ShadowReport>;

  /**
   * Takes one of the tenant's `max` concurrent-dispatch leases, counting the
   * live leases of every process on this store; false when all are taken. A
   * lease past `expiresAt` (epoch ms; its process died) no longer counts.
   */
  acquireLease(
    tenantId: string,
    leaseId: string,
    max: number,
    now: number,
    expiresAt: number,
  ): Promise<boolean>;
  /** Gives a lease back. */
  releaseLease(tenantId: string, leaseId: string): Promise<void>;
  /**
   * Moves the expiry of live leases (their process's heartbeat): a lease
   * whose process dies lapses `expiresAt` after its last renewal.
   */
  renewLeases(leaseIds: readonly string[], expiresAt: number): Promise<void>;

  /**
   * Adds `events` and `fuel` to the tenant's usage in the minute starting at
   * `windowStart` (epoch ms) and returns the totals after adding: quotas count
   * across processes sharing the store.
   */
  addUsage(
    tenantId: string,
    windowStart: number,
    events: number,
    fuel: number,
  ): Promise<{ events: number; fuel: number }>;
  /**
   * Deletes the usage of every tenant's minutes that started before `before`
   * (epoch ms; only the current minute counts toward a quota); returns how
   * many minutes were deleted.
   */
  pruneUsage(before: number): Promise<number>;
}
