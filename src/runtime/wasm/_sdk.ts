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

/** Namespaces of host functions; each is bound to the SDK call context. */
// deno-lint-ignore no-explicit-any
export type HostNamespaces = Record<string, Record<string, (...args: any[]) => unknown>>;

/** Instantiates `module` in the foreground, without the SDK's WASI and with a silent logger. */
export async function createForegroundPlugin(
  module: WebAssembly.Module,
  functions: HostNamespaces,
): Promise<SdkPlugin> {
  const options = { useWasi: false, functions, logger: SILENT };
  const plugin = await createPlugin(
    { wasm: [{ module }] },
    options as unknown as Parameters<typeof createPlugin>[1],
  );
  return plugin as unknown as SdkPlugin;
}
