/**
 * A read-only {@linkcode Store} over bundle data, for Workers: keys, tenants
 * and hooks as they were at bundle time; audit rows go to a sink (JSON lines
 * or batched POSTs); quotas are not enforced (they need state shared across
 * isolates — every lease is granted and usage is not counted). Every write
 * the registry routes would make fails (the Worker does not route them here).
 *
 * @module
 */
import type { AuditRow, HookRow, Store, TenantRow } from "../store/store.ts";
import type { BundleData } from "./bundle_data.ts";

function readOnly(): Promise<never> {
  return Promise.reject(new Error("this Worker serves a bundle; its registry is read-only"));
}

/** The store of a Worker; `audit` receives each group of committed rows. */
export function bundleStore(data: BundleData, audit: (rows: AuditRow[]) => Promise<void>): Store {
  const tenants = new Map<string, TenantRow>(data.tenants.map((t) => [t.id, t]));
  const keys = new Map(data.keys.map((k) => [k.hash, k.tenant_id]));
  const hooks = new Map<string, HookRow[]>();
  for (const row of data.hooks) {
    const list = hooks.get(row.tenant_id) ?? [];
    list.push(row);
    hooks.set(row.tenant_id, list);
  }
  return {
    kind: "bundle",
    migrate: () => Promise.resolve(),
    ping: () => Promise.resolve(),
    close: () => Promise.resolve(),
    createTenant: readOnly,
    getTenant: (id) => Promise.resolve(tenants.get(id) ?? null),
    listTenants: () => Promise.resolve([...tenants.values()]),
    deleteTenant: readOnly,
    setPolicy: readOnly,
    createKey: readOnly,
    revokeKey: readOnly,
    findKey: () => Promise.resolve(null),
    // The bundle holds key hashes only: an edge Worker has no key list to show.
    listKeys: () => Promise.resolve([]),
    liveKeyHashes: (tenantId) =>
      Promise.resolve(data.keys.filter((k) => k.tenant_id === tenantId).map((k) => k.hash)),
    tenantForKey(hash) {
      const id = keys.get(hash);
      return Promise.resolve(id === undefined ? null : tenants.get(id) ?? null);
    },
    putBlob: readOnly,
    getBlob: () => Promise.resolve(null),
    sweepBlobs: () => Promise.resolve(0),
    storedBytes: () => Promise.resolve(0),
    pruneVersions: readOnly,
    addHookVersion: readOnly,
    listHooks: (tenantId) => Promise.resolve(hooks.get(tenantId) ?? []),
    getHook: () => Promise.resolve(null),
    getVersion: () => Promise.resolve(null),
    setEnabled: readOnly,
    rollback: readOnly,
    deleteHook: readOnly,
    hooksGeneration: () => Promise.resolve(1),
    // The tenant guard (`tenant_created_at`) is for shared stores; it is never part of an item.
    appendAudit: async (
      rows,
    ) => (await audit(rows.map(({ tenant_created_at: _, ...row }) => row)), []),
    readAudit: readOnly,
    pruneAudit: () => Promise.resolve(0),
    countAudit: () => Promise.resolve(0),
    acquireLease: () => Promise.resolve(true),
    releaseLease: () => Promise.resolve(),
    renewLeases: () => Promise.resolve(),
    addUsage: () => Promise.resolve({ events: 0, fuel: 0 }),
    pruneUsage: () => Promise.resolve(0),
  };
}
