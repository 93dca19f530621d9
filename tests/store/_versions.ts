/**
 * A hook version of tenant "t" named "guard", as the store tests add it: a
 * one-byte WebAssembly plugin whose manifest carries `manifest` (name and
 * description filled in).
 */
import type { Store } from "../../packages/store/store.ts";

export async function addGuardVersion(
  store: Store,
  manifest: { description?: string; trigger: string | string[]; priority?: number },
): Promise<void> {
  await store.addHookVersion("t", "guard", {
    sha256: "s1",
    runtime: "wasm",
    size_bytes: 1,
    manifest: { name: "guard", description: "d", ...manifest } as never,
    body: "",
    built_from: "wasm",
    sources: {},
    created_at: "x",
  });
}
