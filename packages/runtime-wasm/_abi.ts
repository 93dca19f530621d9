/**
 * Which plugin ABI a module speaks, from its exports.
 *
 * @module
 */
import { HookboxError } from "../core/errors.ts";

/** `extism`: exports `hook`, protocol over the Extism kernel. `wasi`: a WASI command (`_start`). */
export type PluginAbi = "extism" | "wasi";

/** Export the host calls for each ABI. */
export const ENTRY_EXPORT: Record<PluginAbi, string> = { extism: "hook", wasi: "_start" };

/** Name of the rewriter's wrapper that records `hook`'s i32 return in `__hookbox_rc`. */
export const CAPTURED_HOOK = "__hookbox_call_hook";

/** Detects the ABI; `hook` wins when a module exports both. */
export function detectAbi(exports: readonly { name: string; kind: string }[], path?: string) {
  const has = (name: string) => exports.some((e) => e.name === name && e.kind === "func");
  if (has("hook")) return "extism" satisfies PluginAbi;
  if (has("_start")) return "wasi" satisfies PluginAbi;
  throw new HookboxError(
    "PLUGIN_EXPORT_MISSING",
    "plugin exports neither `hook` (Extism-native) nor `_start` (WASI command)",
    path === undefined ? {} : { path },
  );
}
