/**
 * The service's storage, behind one interface with two implementations
 * (`src/store/sqlite.ts`, embedded; `src/store/postgres.ts`) that pass one
 * shared test suite. Everything is asynchronous so either can sit behind it.
 *
 * Platform hooks are stored under the tenant id {@linkcode PLATFORM} (the
 * empty string, which no tenant id can be).
 *
 * @module
 */
import type { Manifest } from "../schema/manifest.ts";

/** Tenant id under which platform hooks are stored. */
export const PLATFORM = "";

/** A tenant's policy (SPEC §6 "Fixed details"); every field optional. */
export interface TenantPolicy {
  max_memory_mb?: number | undefined;
  max_fuel?: number | undefined;
  max_output_kb?: number | undefined;
  max_timeout_ms?: number | undefined;
  input_kb?: number | undefined;
  module_kb?: number | undefined;
  allowed_hosts?: string[] | undefined;
  max_concurrent?: number | undefined;
  events_per_minute?: number | undefined;
  fuel_per_minute?: number | undefined;
  audit_retention_days?: number | undefined;
}

/** A tenant. */
export interface TenantRow {
  id: string;
  policy: TenantPolicy;
  /** RFC 3339. */
  created_at: string;
}

/** A stored API key (only its hash). */
export interface KeyRow {
  id: string;
  tenant_id: string;
  name: string | null;
  /** Hex SHA-256 of the key. */
  hash: string;
  created_at: string;
}

/** How an uploaded hook runs. */
export type StoredRuntime = "wasm" | "prompt";

/** One stored version of a hook. */
export interface HookVersionRow {
  version: number;
  /** SHA-256 of the plugin that runs (of HOOK.md for a prompt hook). */
  sha256: string;
  runtime: StoredRuntime;
  size_bytes: number;
  manifest: Manifest;
  body: string;
  /** What the upload built from: `wasm`, `js`, `as`, or `prompt`. */
  built_from: string;
  /** The uploaded folder: relative path → SHA-256 of the file, each stored as a blob. */
  sources: Record<string, string>;
  created_at: string;
}

/** A hook with its active version. */
export interface HookRow extends HookVersionRow {
  tenant_id: string;
  name: string;
  enabled: boolean;
}

/** A hook with all its versions, oldest first. */
export interface HookDetail extends HookRow {
  versions: Array<Pick<HookVersionRow, "version" | "sha256" | "created_at">>;
}

/** What a new version needs; the store numbers it. */
export type NewHookVersion = Omit<HookVersionRow, "version">;

/** One hook's line in an audit item (SPEC §6). */
export interface AuditHook {
  name: string;
  level: string;
  version: number | null;
  sha256: string | null;
  outcome: string;
  detail: string | null;
  duration_ms: number;
  fuel: number;
}

/** An audit item (SPEC §6), plus the tenant it belongs to. */
export interface AuditRow {
  decision_id: string;
  tenant_id: string;
  at: string;
  session_id: string;
  event_type: string;
  decision: string;
  reason: string | null;
  blocked_by: string | null;
  dry_run: boolean;
  hooks: AuditHook[];
}

/** Filters of `GET /v1/audit`. */
export interface AuditQuery {
  tenant_id: string;
  session_id?: string | undefined;
  event_type?: string | undefined;
  hook?: string | undefined;
  outcome?: string | undefined;
  decision?: string | undefined;
  /** RFC 3339; items at or after it. */
  since?: string | undefined;
  limit: number;
  /** Opaque: the position after which to continue (newest first). */
  cursor?: string | undefined;
}

/** A page of audit items, newest first. */
export interface AuditPage {
  items: Omit<AuditRow, "tenant_id">[];
  next_cursor: string | null;
}

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
  close(): Promise<void>;

  createTenant(row: TenantRow): Promise<boolean>;
  getTenant(id: string): Promise<TenantRow | null>;
  listTenants(): Promise<TenantRow[]>;
  /** Deletes the tenant with its keys, hooks and audit. */
  deleteTenant(id: string): Promise<boolean>;
  setPolicy(id: string, policy: TenantPolicy): Promise<boolean>;

  createKey(row: KeyRow): Promise<void>;
  /** Revokes a key of `tenantId`; false when there is none. */
  revokeKey(tenantId: string, keyId: string): Promise<boolean>;
  /** The live key with this hash. */
  findKey(hash: string): Promise<KeyRow | null>;
  /** Hashes of a tenant's live keys (edge bundles carry them). */
  liveKeyHashes(tenantId: string): Promise<string[]>;
  /** The tenant of the live key with this hash (one query: every request asks). */
  tenantForKey(hash: string): Promise<TenantRow | null>;

  /** Stores bytes under their SHA-256 (a no-op when present). */
  putBlob(sha256: string, bytes: Uint8Array): Promise<void>;
  getBlob(sha256: string): Promise<Uint8Array | null>;

  /** Adds a version (numbered max + 1), makes it active and the hook enabled. */
  addHookVersion(tenantId: string, name: string, version: NewHookVersion): Promise<HookRow>;
  /** A tenant's hooks (or the platform's), name order. */
  listHooks(tenantId: string): Promise<HookRow[]>;
  getHook(tenantId: string, name: string): Promise<HookDetail | null>;
  setEnabled(tenantId: string, name: string, enabled: boolean): Promise<HookRow | null>;
  rollback(tenantId: string, name: string, version: number): Promise<RollbackResult>;
  deleteHook(tenantId: string, name: string): Promise<boolean>;
  /**
   * A number that changes whenever any hook changes (upload, enable,
   * rollback, delete), in any process on this store: hook caches key on it.
   */
  hooksGeneration(): Promise<number>;

  /**
   * Appends audit rows in one transaction. A row whose `decision_id` is
   * already stored is skipped, so a batch sent twice is stored once.
   */
  appendAudit(rows: AuditRow[]): Promise<void>;
  readAudit(query: AuditQuery): Promise<AuditPage>;
  /** Deletes a tenant's audit rows older than `before` (RFC 3339); returns how many. */
  pruneAudit(tenantId: string, before: string): Promise<number>;
  /** How many audit rows a tenant has (tests and the load script). */
  countAudit(tenantId: string): Promise<number>;

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
}
