import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { corpusRuntime, request, shellEvent, wasmHook, withoutFuel } from "./_corpus.ts";

for (const abi of ["wasi", "extism"]) {
  for (const isolation of ["fresh", "warm"]) {
    Deno.test(`run() ${abi} guard (${isolation}) allows a harmless command with exit 0`, async () => {
      const runtime = corpusRuntime();
      const hook = wasmHook(`guard_${abi}`, { isolation });
      const result = await runtime.run(request(hook, shellEvent("ls -la")));
      assertEquals(withoutFuel(result), { exitCode: 0, stdout: "", stderr: "" });
      await runtime.close?.();
    });

    Deno.test(`run() ${abi} guard (${isolation}) exits 2 with the reason on stderr`, async () => {
      const runtime = corpusRuntime();
      const hook = wasmHook(`guard_${abi}`, { isolation });
      const blocked = await runtime.run(request(hook, shellEvent("rm -rf /")));
      assertEquals(withoutFuel(blocked), {
        exitCode: 2,
        stdout: "",
        stderr: "rm -rf is not allowed",
      });
      const allowed = await runtime.run(request(hook, shellEvent("echo hi")));
      assertEquals(allowed.exitCode, 0);
      await runtime.close?.();
    });
  }

  Deno.test(`run() ${abi} plugin exits 2 with a reason`, async () => {
    const runtime = corpusRuntime();
    const result = await runtime.run(request(wasmHook(`block_${abi}`)));
    assertEquals(withoutFuel(result), { exitCode: 2, stdout: "", stderr: "blocked by policy" });
  });

  Deno.test(`run() ${abi} plugin rewrites tool_input through stdout`, async () => {
    const runtime = corpusRuntime();
    const result = await runtime.run(request(wasmHook(`rewrite_${abi}`), shellEvent("rm -rf /")));
    assertEquals(result.exitCode, 0);
    assertEquals(JSON.parse(result.stdout), { modified_input: { command: "ls -la" } });
  });
}
