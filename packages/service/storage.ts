/**
 * What one tenant may keep in the store, and the defaults.
 *
 * @module
 */

/**
 * What one tenant may keep in the store. Uploads are size-capped one by one;
 * these bound what many uploads add up to, so no tenant can fill the disk
 * every tenant's audit is written to.
 */
export interface StorageLimits {
  /** Hooks a tenant may have. @default 1000 */
  hooksPerTenant: number;
  /** Versions kept per hook: an upload past it deletes the oldest (never the active one). @default 20 */
  versionsPerHook: number;
  /** Bytes a tenant's kept versions may hold, plugins and uploaded files. @default 1 GiB */
  bytesPerTenant: number;
}

/** The default {@linkcode StorageLimits}. */
export const DEFAULT_STORAGE_LIMITS: Readonly<StorageLimits> = Object.freeze({
  hooksPerTenant: 1000,
  versionsPerHook: 20,
  bytesPerTenant: 1024 * 1024 * 1024,
});
