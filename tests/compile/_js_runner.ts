/**
 * Test helpers for JS/TS hooks: compile a fixture (cached by content hash in
 * `.cache/test-plugins`), run it through hookbox's wasm runtime, or run the
 * same script as a `node` (or, for TypeScript, `deno`) subprocess.
 *
 * @module
 */
import { compileJsHook } from "../../packages/compile/js.ts";
import { createWasmRuntime } from "../../packages/runtime-wasm/mod.ts";
import type { EffectiveLimits, RunResult } from "../../packages/core/runtime/types.ts";
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { fakeHook, runWithStdin } from "../_helpers.ts";

/** Absolute path of a fixture in tests/fixtures/js. */
export function fixture(name: string): string {
  return new URL(`../fixtures/js/${name}`, import.meta.url).pathname;
}

/** Shared plugin cache for tests (safe: keyed by content hash). */
export const TEST_CACHE = new URL("../../.cache/test-plugins", import.meta.url).pathname;

/** Limits generous enough for every well-behaved fixture. */
export const LIMITS: EffectiveLimits = {
  memoryMb: 64,
  fuel: 2_000_000_000,
  outputKb: 256,
  inputKb: 256,
  moduleKb: 8192,
  timeoutMs: 10_000,
};

/** What a run produced, as the differential tests compare it. */
export interface Observed {
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

/** Compiles `name` and runs it through the wasm runtime; `grant` lists env names it may see. */
export async function wasmRunner(
  name: string,
  limits: Partial<EffectiveLimits> = {},
  grant: string[] = [],
  isolation: "fresh" | "warm" = "fresh",
): Promise<
  { run(input: string, env?: Record<string, string>): Promise<RunResult>; close(): Promise<void> }
> {
  const { bytes } = await compileJsHook(fixture(name), { cacheDir: TEST_CACHE });
  const hook = fakeHook({ name: "js-fixture", env: grant, isolation }, {
    entry: { runtime: "wasm", format: "js", path: fixture(name) },
  });
  const runtime = createWasmRuntime({ loadBytes: () => Promise.resolve(bytes) });
  return {
    run: (input, env = {}) =>
      runtime.run({
        hook,
        input: new TextEncoder().encode(input),
        env,
        limits: { ...LIMITS, ...limits },
        tenantId: "tenant-js",
      }),
    close: async () => await runtime.close?.(),
  };
}

/** Runs `name` with node (deno for `.ts`) in a scrubbed environment. */
export async function nativeRun(
  name: string,
  input: string,
  env: Record<string, string> = {},
): Promise<Observed> {
  const ts = name.endsWith(".ts");
  const cmd = ts ? Deno.execPath() : "node";
  const args = ts
    ? ["run", "--quiet", "--no-config", "--no-lock", "-A", fixture(name)]
    : [fixture(name)];
  return await runWithStdin(cmd, args, input, {
    env: { ...env, ...(ts ? { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" } : {}) },
    clearEnv: true,
  });
}

/**
 * Runs each event through `wasm` and through `native`; fails unless exit
 * code, stdout and stderr are identical (and the wasm run reports no failure).
 */
export async function assertRunsLike(
  wasm: { run(input: string): Promise<RunResult> },
  events: readonly string[],
  native: (event: string) => Promise<Observed>,
  label: string,
): Promise<void> {
  for (const event of events) {
    const expected = await native(event);
    const actual = await wasm.run(event);
    if (actual.failure !== undefined) {
      throw new Error(`${label} on ${event}: ${JSON.stringify(actual.failure)}`);
    }
    assertEquals(
      { exitCode: actual.exitCode, stdout: actual.stdout, stderr: actual.stderr },
      expected,
      `${label} on ${event}`,
    );
  }
}
