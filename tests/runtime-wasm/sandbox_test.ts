/** Isolation modes, the WASI sandbox surface, and engine-style interrupts. */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { corpusRuntime, request, wasmHook, withoutFuel } from "./_corpus.ts";
import { runFailure } from "../../packages/core/runtime/failure.ts";

for (const isolation of ["fresh", "warm"]) {
  Deno.test(`run() (${isolation}) starts every call from pristine memory and globals`, async () => {
    const runtime = corpusRuntime();
    const hook = wasmHook("state_counter", { isolation });
    for (let i = 0; i < 3; i++) {
      const result = await runtime.run(request(hook));
      assertEquals(withoutFuel(result), { exitCode: 0, stdout: "11", stderr: "" });
    }
    await runtime.close?.();
  });
}

Deno.test("run() (warm) keeps tenants on separate instances that each reset", async () => {
  const runtime = corpusRuntime();
  const hook = wasmHook("state_counter", { isolation: "warm" });
  for (const tenantId of ["a", "b", "a", "b"]) {
    const result = await runtime.run(request(hook, undefined, {}, { tenantId }));
    assertEquals(result.stdout, "11");
  }
  await runtime.close?.();
});

Deno.test("run() gives WASI plugins args [hook], only granted env, and no filesystem", async () => {
  const runtime = corpusRuntime();
  const hook = wasmHook("sandbox_probe", { env: ["HOOKBOX_SESSION_ID", "HOOKBOX_MISSING"] });
  const env = { HOOKBOX_SESSION_ID: "s1", HOOKBOX_WORK_DIR: "/secret", PATH: "/bin" };
  const result = await runtime.run(request(hook, undefined, {}, { env }));
  assertEquals(result.exitCode, 0);
  // path_open on fd 3 answers ENOTCAPABLE (76): there are no preopened directories.
  assertEquals(result.stdout, "argv=hook env=HOOKBOX_SESSION_ID=s1\0 open=76");
});

Deno.test("run() gives WASI plugins an empty environment by default", async () => {
  const runtime = corpusRuntime();
  const env = { HOOKBOX_SESSION_ID: "s1" };
  const result = await runtime.run(request(wasmHook("sandbox_probe"), undefined, {}, { env }));
  assertEquals(result.stdout, "argv=hook env= open=76");
});

Deno.test("run() reports time when an engine unwinds after should_interrupt", async () => {
  const runtime = corpusRuntime();
  const limits = { fuel: 1e12, timeoutMs: 100 };
  const result = await runtime.run(request(wasmHook("interrupt_poll"), undefined, limits));
  assertEquals(result.failure, runFailure("TIMEOUT"));
});

Deno.test("run() reports fuel when an engine polls should_interrupt past its budget", async () => {
  const runtime = corpusRuntime();
  const limits = { fuel: 100_000 };
  const result = await runtime.run(request(wasmHook("interrupt_poll"), undefined, limits));
  assertEquals(result.failure, runFailure("LIMIT_FUEL"));
});

Deno.test("run() stops a plugin when the request is aborted", async () => {
  const runtime = corpusRuntime();
  const controller = new AbortController();
  controller.abort();
  const limits = { fuel: 1e12 };
  const hook = wasmHook("loop_in_host_call");
  const result = await runtime.run(request(hook, undefined, limits, { signal: controller.signal }));
  assertEquals(result.failure, runFailure("ABORTED"));
});
