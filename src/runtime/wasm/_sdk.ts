/**
 * The one place that talks to `@extism/extism` (1.0.3, pinned). We rely on
 * the foreground plugin's `callBlock` (public on the class, absent from the
 * `Plugin` type), which runs an export with an input block and ignores its
 * return value.
 *
 * @module
 */
import createPlugin from "@extism/extism";

/** The foreground plugin surface hookbox uses. */
export interface SdkPlugin {
  callBlock(
    target: [string, string],
    input: number | null,
  ): Promise<[number | null, number | null]>;
  reset(): Promise<boolean>;
  getInstance(): Promise<WebAssembly.Instance>;
  close(): Promise<void>;
}

const SILENT = { info() {}, debug() {}, warn() {}, error() {}, trace() {} };

/**
 * Handed to the SDK as its `fetch`, which it uses only to load manifests by
 * URL — hookbox never does. Without it the SDK reads the global `fetch`,
 * and in Deno the first touch of `fetch` or `Response` loads the whole fetch
 * and streams layer (~15 ms of a one-shot CLI run).
 */
const NO_FETCH = () => Promise.reject(new Error("hookbox plugins are never loaded by URL"));

/** Namespaces of host functions; each is bound to the SDK call context. */
// deno-lint-ignore no-explicit-any
export type HostNamespaces = Record<string, Record<string, (...args: any[]) => unknown>>;

/** Instantiates `module` in the foreground, without the SDK's WASI and with a silent logger. */
export async function createForegroundPlugin(
  module: WebAssembly.Module,
  functions: HostNamespaces,
): Promise<SdkPlugin> {
  const options = { useWasi: false, functions, logger: SILENT, fetch: NO_FETCH };
  // The module itself, not a manifest naming it: the SDK returns early for a
  // module, before an `instanceof Response` test (see NO_FETCH).
  const plugin = await createPlugin(
    module,
    options as unknown as Parameters<typeof createPlugin>[1],
  );
  return plugin as unknown as SdkPlugin;
}
