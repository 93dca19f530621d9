/**
 * What `hookbox bundle` hands a Worker: the registry as read-only data (the
 * tenants, the hashes of their live keys, the platform's and their enabled
 * active hooks) and the load metadata of every prepared plugin. Plugins
 * themselves travel as `.wasm` module imports named by their instrumented
 * SHA-256.
 *
 * @module
 */
import type { EffectiveLimits } from "../core/runtime/types.ts";
import type { PreparedPlugin } from "../runtime-wasm/mod.ts";
import type { HookRow, TenantRow } from "../store/store.ts";

/** Format version of {@linkcode BundleData}. */
export const BUNDLE_VERSION = 2;

/** The registry and plugin metadata a Worker serves from. */
export interface BundleData {
  /** Format version. */
  version: typeof BUNDLE_VERSION;
  /** When the bundle was made (RFC 3339). */
  created_at: string;
  /** The bundled tenants with their policies. */
  tenants: TenantRow[];
  /** SHA-256 (hex) of each live key at bundle time, with its tenant. Never the key itself. */
  keys: { hash: string; tenant_id: string }[];
  /** Platform hooks (tenant "") and the bundled tenants' enabled hooks, active versions only. */
  hooks: HookRow[];
  /** Load metadata by {@linkcode preparedKey}. */
  plugins: Record<string, Omit<PreparedPlugin, "bytes">>;
  /** Plugins that failed to prepare, by {@linkcode preparedKey}: the Worker reports the same. */
  failures: Record<string, { code: string; message: string }>;
  /** SHA-256 of the trap helper module. */
  trap: string;
  /** SHA-256 of the restorer helper module (warm instances). */
  restore: string;
}

/** The key of a plugin prepared for some limits and isolation. */
export function preparedKey(
  pluginSha: string,
  limits: Pick<EffectiveLimits, "memoryMb" | "moduleKb">,
  isolation: string,
): string {
  return `${pluginSha}:${limits.memoryMb}:${limits.moduleKb}:${isolation}`;
}
