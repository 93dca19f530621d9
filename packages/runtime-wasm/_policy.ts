/**
 * Import policy: a plugin may import only the Extism kernel, the WASI
 * preview1 functions our shim emulates, and `hookbox.should_interrupt`.
 * Checked on the original bytes, before instrumenting.
 *
 * @module
 */
import { HookboxError } from "../core/errors.ts";
import { EXTISM_KERNEL } from "./extism/_extism.ts";
import { WASI_FUNCTION_NAMES } from "./wasi/_wasi.ts";

/** One import as the policy sees it. */
export interface ImportRef {
  module: string;
  name: string;
  kind: string;
}

const ALLOWED: Record<string, ReadonlySet<string>> = {
  "extism:host/env": EXTISM_KERNEL,
  "wasi_snapshot_preview1": WASI_FUNCTION_NAMES,
  "hookbox": new Set(["should_interrupt"]),
};

/** The first import the policy refuses, or null. */
export function deniedImport(imports: readonly ImportRef[]): ImportRef | null {
  for (const imp of imports) {
    const names = Object.hasOwn(ALLOWED, imp.module) ? ALLOWED[imp.module] : undefined;
    if (imp.kind !== "func" || names === undefined || !names.has(imp.name)) return imp;
  }
  return null;
}

/** Throws `PLUGIN_IMPORT_DENIED` naming the first import outside the allowed set. */
export function checkImports(imports: readonly ImportRef[], path?: string): void {
  const denied = deniedImport(imports);
  if (denied === null) return;
  const what = denied.kind === "func" ? "" : ` (${denied.kind})`;
  throw new HookboxError(
    "PLUGIN_IMPORT_DENIED",
    `import ${denied.module}.${denied.name}${what} is not allowed`,
    { ...(path === undefined ? {} : { path }), field: `${denied.module}.${denied.name}` },
  );
}
