/**
 * Test harness: runs a compiled AssemblyScript plugin through hookbox's wasm
 * runtime (`createWasmRuntime`) exactly as `dispatch` would, and reports
 * exit code, stdout, stderr and any failure.
 */

import type { HookDefinition } from "../../packages/core/hook/types.ts";
import type { EffectiveLimits, RunFailure } from "../../packages/core/runtime/types.ts";
import { createWasmRuntime } from "../../packages/runtime-wasm/mod.ts";
import { manifestSchema } from "../../packages/core/schema/manifest.ts";

/** Exit code, stdout and stderr of one call (exit code -1 when it failed). */
export interface HookRun {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** Present only when the call failed (trap, limit, ...). */
  failure?: RunFailure;
}

/** A loaded plugin whose `hook` can be called repeatedly (warm). */
export interface LoadedHook {
  run(event: unknown): Promise<HookRun>;
  close(): Promise<void>;
}

const LIMITS: EffectiveLimits = {
  memoryMb: 16,
  fuel: 1_000_000_000,
  outputKb: 1024,
  inputKb: 1024,
  moduleKb: 16384,
  timeoutMs: 10_000,
};

function definition(isolation: "warm" | "fresh"): HookDefinition {
  const manifest = manifestSchema().parse({
    name: "as-test",
    description: "test",
    trigger: "pre-tool-call",
    isolation,
  });
  return {
    name: "as-test",
    level: "project",
    dir: "/as-test",
    manifest,
    body: "",
    entry: { runtime: "wasm", format: "as", path: "/as-test/scripts/run.as.ts" },
  };
}

/** Loads `bytes` into a warm instance and wraps `hook`. */
export function loadHook(bytes: Uint8Array, isolation: "warm" | "fresh" = "warm"): LoadedHook {
  const runtime = createWasmRuntime({ loadBytes: () => Promise.resolve(bytes) });
  const hook = definition(isolation);
  return {
    async run(event) {
      const text = typeof event === "string" ? event : JSON.stringify(event);
      const input = new TextEncoder().encode(text);
      const r = await runtime.run({ hook, input, env: {}, limits: LIMITS, tenantId: "t" });
      const run: HookRun = { exitCode: r.exitCode ?? -1, stdout: r.stdout, stderr: r.stderr };
      if (r.failure) run.failure = r.failure;
      return run;
    },
    close: async () => await runtime.close?.(),
  };
}

/** One call on a fresh instance. */
export async function runHook(bytes: Uint8Array, event: unknown): Promise<HookRun> {
  const hook = loadHook(bytes, "fresh");
  try {
    return await hook.run(event);
  } finally {
    await hook.close();
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
