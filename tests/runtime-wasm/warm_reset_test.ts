/**
 * Warm instances restore only the pages a call wrote (write tracking). The
 * probe plugin checks all of its memory is pristine, then writes it every way
 * a guest or the host can; each later call must still find it pristine.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { corpusRuntime, request, shellEvent, wasmHook, withoutFuel } from "./_corpus.ts";
import { runFailure } from "../../packages/core/runtime/failure.ts";

const OK = { exitCode: 0, stdout: "ok", stderr: "" };

for (const isolation of ["warm", "fresh"] as const) {
  for (const worker of [false, true]) {
    const mode = `${isolation}${worker ? ", worker" : ""}`;
    Deno.test(`run() (${mode}) resets every page the previous call or the host wrote`, async () => {
      const runtime = corpusRuntime({}, { worker });
      const hook = wasmHook("warm_reset_probe", { isolation });
      try {
        for (let call = 0; call < 4; call++) {
          const event = shellEvent(`echo ${"x".repeat(200 * call)}`);
          assertEquals(withoutFuel(await runtime.run(request(hook, event))), OK, `call ${call}`);
        }
      } finally {
        await runtime.close?.();
      }
    });
  }
}

Deno.test("run() (warm) keeps resetting after a call that failed and replaced the instance", async () => {
  const runtime = corpusRuntime();
  const hook = wasmHook("warm_reset_probe", { isolation: "warm" });
  try {
    assertEquals(withoutFuel(await runtime.run(request(hook, shellEvent("ls")))), OK);
    // Too little fuel to finish the memory scan: the instance is dropped.
    const starved = await runtime.run(request(hook, shellEvent("ls"), { fuel: 1000 }));
    assertEquals(starved.failure, runFailure("LIMIT_FUEL"));
    for (let call = 0; call < 2; call++) {
      assertEquals(
        withoutFuel(await runtime.run(request(hook, shellEvent("ls")))),
        OK,
        `call ${call}`,
      );
    }
  } finally {
    await runtime.close?.();
  }
});

Deno.test("run() (warm) never reuses an instance whose memory grew: no creeping growth to the cap", async () => {
  const runtime = corpusRuntime();
  try {
    // grow_each_call grows 10 pages per call; under a 1 MiB cap (16 pages) a reused, restored
    // instance would find its memory still grown and fail on the second call.
    const hook = wasmHook("grow_each_call", { isolation: "warm" });
    for (let i = 0; i < 5; i++) {
      const result = await runtime.run(request(hook, undefined, { memoryMb: 1 }));
      assertEquals([result.exitCode, result.failure], [0, undefined], `call ${i}`);
    }
  } finally {
    await runtime.close?.();
  }
});
