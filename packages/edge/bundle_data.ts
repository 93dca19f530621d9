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
export const BUNDLE_VERSION = 4;

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
  /**
   * Where each plugin's memory image is, by the plugin's SHA-256, for
   * plugins that share their instrumented module (JS hooks: one QuickJS
   * engine): the runs of its module's base image and the runs it differs
   * from that base in, each as a chunk of `chunks` and a byte offset in it
   * once inflated (see {@linkcode encodeRuns}).
   */
  images: Record<string, { base: ImagePlace; own: ImagePlace }>;
  /**
   * `images.bin` as byte ranges `[offset, length]`, each a chunk of runs
   * compressed on its own (deflate-raw): a Worker inflates a chunk when one
   * of its plugins first loads, and starts without reading the rest
   * (workerd takes about 6 ms per megabyte of data modules at start).
   */
  chunks: [number, number][];
}

/** Where runs are: chunk `chunk` of `BundleData.chunks`, at byte `at` once inflated. */
export interface ImagePlace {
  /** Index into `BundleData.chunks`. */
  chunk: number;
  /** Byte offset of the runs in the inflated chunk. */
  at: number;
}

/** Plugins' own runs per chunk of `images.bin` (a base image is a chunk of its own). */
export const IMAGES_PER_CHUNK = 32;

/** Runs of `[offset, bytes]`: what a memory image writes into a zeroed memory. */
export type ImageRuns = readonly (readonly [number, Uint8Array])[];

/** `runs` as bytes: a u32 count, then each run's u32 offset, u32 length and bytes (little-endian). */
export function encodeRuns(runs: ImageRuns): Uint8Array {
  const size = 4 + runs.reduce((sum, [, bytes]) => sum + 8 + bytes.length, 0);
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  view.setUint32(0, runs.length, true);
  let at = 4;
  for (const [offset, bytes] of runs) {
    view.setUint32(at, offset, true);
    view.setUint32(at + 4, bytes.length, true);
    out.set(bytes, at + 8);
    at += 8 + bytes.length;
  }
  return out;
}

/** The runs encoded at byte `at` of `buffer`, as views into it (nothing copied). */
export function decodeRuns(buffer: ArrayBuffer, at: number): [number, Uint8Array][] {
  const view = new DataView(buffer);
  const runs: [number, Uint8Array][] = [];
  const count = view.getUint32(at, true);
  at += 4;
  for (let i = 0; i < count; i++) {
    const offset = view.getUint32(at, true);
    const length = view.getUint32(at + 4, true);
    runs.push([offset, new Uint8Array(buffer, at + 8, length)]);
    at += 8 + length;
  }
  return runs;
}

/** Equal bytes inside one run of {@linkcode deltaRuns} before it is split in two. */
const DELTA_GAP = 16;

/**
 * The runs that turn the image of `base` into the image of `own` (both
 * written into zeroed memory): every byte where they differ, zeros included.
 */
export function deltaRuns(base: ImageRuns, own: ImageRuns): [number, Uint8Array][] {
  const image = (runs: ImageRuns, size: number) => {
    const bytes = new Uint8Array(size);
    for (const [offset, data] of runs) bytes.set(data, offset);
    return bytes;
  };
  const end = (runs: ImageRuns) => runs.reduce((max, [o, d]) => Math.max(max, o + d.length), 0);
  const size = Math.max(end(base), end(own));
  const from = image(base, size);
  const to = image(own, size);
  const runs: [number, Uint8Array][] = [];
  for (let at = 0; at < size;) {
    if (from[at] === to[at]) {
      at++;
      continue;
    }
    let stop = at + 1;
    for (let same = 0; stop < size && same <= DELTA_GAP; stop++) {
      same = from[stop] === to[stop] ? same + 1 : 0;
    }
    while (from[stop - 1] === to[stop - 1]) stop--;
    runs.push([at, to.slice(at, stop)]);
    at = stop;
  }
  return runs;
}

/**
 * Most memory one hook may have in a Worker, MiB, whatever its tenant's
 * policy allows (`max_memory_mb`, 256 by default): an isolate has 128 MB for
 * everything it holds, and a hook that grows past what is left ends the
 * isolate (error 1102) and every tenant's request in it, instead of ending
 * as `limit`/`LIMIT_MEMORY` with its `on_error`.
 */
export const EDGE_MAX_MEMORY_MB = 32;

/**
 * A tenant as a Worker serves it: its policy's `max_memory_mb` lowered to
 * {@linkcode EDGE_MAX_MEMORY_MB}. The bundle prepares plugins for, and the
 * Worker runs them under, this policy.
 */
export function edgeTenant(tenant: TenantRow): TenantRow {
  const memory = Math.min(tenant.policy.max_memory_mb ?? Infinity, EDGE_MAX_MEMORY_MB);
  return { ...tenant, policy: { ...tenant.policy, max_memory_mb: memory } };
}

/** The key of a plugin prepared for some limits and isolation. */
export function preparedKey(
  pluginSha: string,
  limits: Pick<EffectiveLimits, "memoryMb" | "moduleKb">,
  isolation: string,
): string {
  return `${pluginSha}:${limits.memoryMb}:${limits.moduleKb}:${isolation}`;
}
