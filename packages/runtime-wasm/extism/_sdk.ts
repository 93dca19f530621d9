/**
 * The one place that talks to `@extism/extism` (1.0.3, pinned). We rely on
 * the foreground plugin's `callBlock` (public on the class, absent from the
 * `Plugin` type), which runs an export with an input block and ignores its
 * return value. Only plugins that can reach the Extism kernel are loaded
 * through it (`_instance.ts`), so the SDK is imported at the first such
 * plugin: a process that runs only WASI commands (QuickJS, AssemblyScript
 * hooks) never loads it (~4 ms of a one-shot CLI's start).
 *
 * @module
 */
type CreatePlugin = typeof import("@extism/extism").default;

let sdk: Promise<CreatePlugin> | null = null;

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
  if (sdk === null) {
    const loading = import("@extism/extism").then((m) => m.default);
    sdk = loading;
    loading.catch(() => {
      if (sdk === loading) sdk = null; // tried again by the next plugin
    });
  }
  const createPlugin = await sdk;
  const plugin = await createPlugin(
    module,
    options as unknown as Parameters<CreatePlugin>[1],
  );
  return plugin as unknown as SdkPlugin;
}
