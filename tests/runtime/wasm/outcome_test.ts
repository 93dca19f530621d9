/**
 * A call that returns normally after its deadline passed, its fuel ran out
 * or the executor closed reports that limit, never the guest's answer.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { GuestHost } from "../../../src/runtime/wasm/_host.ts";
import { exited } from "../../../src/runtime/wasm/_outcome.ts";
import { runFailure } from "../../../src/runtime/failure.ts";

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
