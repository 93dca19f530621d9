/**
 * Test harness: runs an Extism-native plugin through `@extism/extism` and
 * recovers what the SDK drops — the exit code (the `hook` export's i32) and
 * stderr (`error_set`, which the SDK turns into a thrown error).
 *
 * Temporary until `createWasmRuntime` (src/runtime/wasm) lands.
 */

import createPlugin from "@extism/extism";

/** Exit code, stdout and stderr of one call. */
export interface HookRun {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** A loaded plugin whose `hook` can be called repeatedly (warm). */
export interface LoadedHook {
  run(event: unknown): Promise<HookRun>;
  close(): Promise<void>;
}

const ERROR_PREFIX = "Plugin-originated error: ";

/** Loads `bytes` with the Extism SDK (no WASI) and wraps `hook`. */
export async function loadHook(bytes: Uint8Array): Promise<LoadedHook> {
  const exit = { code: -1 };
  const plugin = await withHookCapture(
    exit,
    () => createPlugin({ wasm: [{ data: bytes }] }, { useWasi: false }),
  );
  return {
    async run(event) {
      exit.code = -1;
      const input = typeof event === "string" ? event : JSON.stringify(event);
      try {
        const output = await plugin.call("hook", input);
        return { exitCode: exit.code, stdout: output?.text() ?? "", stderr: "" };
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        if (!message.startsWith(ERROR_PREFIX)) throw err;
        return { exitCode: exit.code, stdout: "", stderr: message.slice(ERROR_PREFIX.length) };
      }
    },
    close: () => plugin.close(),
  };
}

/** One call on a fresh instance. */
export async function runHook(bytes: Uint8Array, event: unknown): Promise<HookRun> {
  const hook = await loadHook(bytes);
  try {
    return await hook.run(event);
  } finally {
    await hook.close();
  }
}

type Instantiate = typeof WebAssembly.instantiate;

// The SDK calls `instance.exports.hook()` and ignores its result; while the
// plugin is created, hand it an instance whose `hook` records the result.
async function withHookCapture<T>(exit: { code: number }, create: () => Promise<T>): Promise<T> {
  const original: Instantiate = WebAssembly.instantiate;
  const patched = async (module: WebAssembly.Module, imports?: WebAssembly.Imports) => {
    const instance = await original(module, imports);
    const hook = instance.exports.hook as () => number;
    const exports = { ...instance.exports, hook: () => (exit.code = hook()) };
    return { exports } as unknown as WebAssembly.Instance;
  };
  WebAssembly.instantiate = patched as unknown as Instantiate;
  try {
    return await create();
  } finally {
    WebAssembly.instantiate = original;
  }
}

/** A pre-tool-call event for the Bash tool. */
export function bashEvent(command: string): Record<string, unknown> {
  return {
    event_type: "pre-tool-call",
    timestamp: "2025-01-01T00:00:00Z",
    session_id: "s1",
    work_dir: "/tmp",
    tool_name: "Bash",
    tool_input: { command },
    tool_use_id: "t1",
  };
}
