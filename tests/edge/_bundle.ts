/**
 * The smallest bundle a Worker serves: no tenants, no hooks, the trap and
 * restorer helpers compiled, for tests of the Worker without `hookbox bundle`.
 */
import { BUNDLE_VERSION, type BundleData } from "../../packages/edge/bundle_data.ts";
import { restoreModule, trapModule } from "../../packages/runtime-wasm/mod.ts";

/** Empty bundle data (`tenants` and `keys` to fill in) and its helper modules. */
export async function emptyBundle(): Promise<
  { data: BundleData; modules: Record<string, WebAssembly.Module> }
> {
  const trap = await trapModule();
  const restore = await restoreModule();
  return {
    data: {
      version: BUNDLE_VERSION,
      created_at: "2026-11-22T00:00:00Z",
      tenants: [],
      keys: [],
      hooks: [],
      plugins: {},
      failures: {},
      trap: trap.sha256,
      restore: restore.sha256,
      images: {},
      chunks: [],
    },
    modules: {
      [trap.sha256]: await WebAssembly.compile(trap.bytes as BufferSource),
      [restore.sha256]: await WebAssembly.compile(restore.bytes as BufferSource),
    },
  };
}
