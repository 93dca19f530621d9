/**
 * The AssemblyScript guard through hookbox's own wasm runtime (which, unlike
 * the bare Extism SDK, recovers the exit code and keeps stdout and stderr).
 */
import assert from "node:assert/strict";
import { compileAsHook } from "../../packages/compile/as.ts";
import { createWasmRuntime } from "../../packages/runtime-wasm/mod.ts";
import type { RunRequest } from "../../packages/core/runtime/types.ts";
import { fakeHook, tempDir } from "../_helpers.ts";
import { bashEvent } from "./_as_harness.ts";

const GUARD = new URL("../../hooks/shell-guard-as/scripts/run.as.ts", import.meta.url).pathname;

async function guardRuntime(isolation: "fresh" | "warm") {
  const cacheDir = await tempDir("hookbox-as-rt-");
  const { bytes } = await compileAsHook(GUARD, { cacheDir });
  await Deno.remove(cacheDir, { recursive: true });
  const hook = fakeHook({ name: "shell-guard-as", isolation }, {
    entry: { runtime: "wasm", format: "as", path: GUARD },
  });
  const runtime = createWasmRuntime({ loadBytes: () => Promise.resolve(bytes) });
  const request = (command: string): RunRequest => ({
    hook,
    input: new TextEncoder().encode(JSON.stringify(bashEvent(command))),
    env: {},
    limits: {
      memoryMb: 4,
      fuel: 10_000_000,
      outputKb: 64,
      inputKb: 64,
      moduleKb: 1024,
      timeoutMs: 5000,
    },
    tenantId: "tenant-a",
  });
  return { runtime, request };
}

for (const isolation of ["fresh", "warm"] as const) {
  Deno.test(`shell-guard-as via createWasmRuntime (${isolation}) blocks rm -rf / and allows ls`, async () => {
    const { runtime, request } = await guardRuntime(isolation);
    try {
      const blocked = await runtime.run(request("rm -rf /"));
      assert.equal(blocked.exitCode, 2, JSON.stringify(blocked));
      assert.match(blocked.stderr, /^shell-guard: /);
      const allowed = await runtime.run(request("ls -la"));
      assert.deepEqual(
        { exitCode: allowed.exitCode, stdout: allowed.stdout, stderr: allowed.stderr },
        { exitCode: 0, stdout: "", stderr: "" },
      );
      assert.equal(allowed.failure, undefined);
    } finally {
      await runtime.close?.();
    }
  });
}
