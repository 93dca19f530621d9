/**
 * A call that returns normally after its deadline passed, its fuel ran out
 * or the executor closed reports that limit, never the guest's answer.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { GuestHost } from "../../packages/runtime-wasm/_host.ts";
import { exited } from "../../packages/runtime-wasm/_outcome.ts";
import { runFailure } from "../../packages/core/runtime/failure.ts";
import { corpusRuntime, request, shellEvent, wasmHook } from "./_corpus.ts";

function host(deadline: number, signal?: AbortSignal): GuestHost {
  const h = new GuestHost(() => {
    throw new Error("trap");
  });
  h.begin({
    input: new Uint8Array(0),
    env: [],
    fuel: 1000,
    outputBytes: 1024,
    hostBytes: 1024,
    deadline,
    signal,
  });
  h.stdout.write(new TextEncoder().encode("allow"));
  return h;
}

Deno.test("exited() reports a deadline that passed during the call instead of the exit", () => {
  const result = exited(host(performance.now() - 1), 0);
  assertEquals(result.exitCode, null);
  assertEquals(result.failure, runFailure("TIMEOUT"));
});

Deno.test("exited() reports an abort that came during the call instead of the exit", () => {
  const controller = new AbortController();
  const h = host(Infinity, controller.signal);
  controller.abort();
  assertEquals(exited(h, 0).failure, runFailure("ABORTED"));
});

Deno.test("exited() keeps the answer of a call that ended within its limits", () => {
  assertEquals(exited(host(Infinity), 0), { exitCode: 0, stdout: "allow", stderr: "" });
});

Deno.test("run() reports the fuel a call used, the same on every run and more for more work", async () => {
  const runtime = corpusRuntime();
  const hook = wasmHook("guard_wasi");
  const short = await runtime.run(request(hook, shellEvent("ls")));
  const again = await runtime.run(request(hook, shellEvent("ls")));
  const long = await runtime.run(request(hook, shellEvent("ls ".repeat(2000))));
  assertEquals(typeof short.fuel, "number");
  ok(short.fuel! > 0);
  assertEquals(again.fuel, short.fuel, "metering is deterministic");
  ok(long.fuel! > short.fuel! * 2, `${long.fuel} vs ${short.fuel}`);
  const stopped = await runtime.run(request(wasmHook("loop_forever"), undefined, { fuel: 50_000 }));
  assertEquals(stopped.failure?.code, "LIMIT_FUEL");
  ok(stopped.fuel! >= 50_000, `a call stopped for fuel used its budget (${stopped.fuel})`);
  await runtime.close?.();
});
