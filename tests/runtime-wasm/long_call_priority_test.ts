/**
 * A plugin worker whose call runs long drops below the other plugin workers
 * (nice 19 instead of 10) while it runs, and comes back once the call ends,
 * so a tenant whose hooks spin to their limits competes for CPU with nobody's
 * hooks but its own — where the worker may raise itself back (root,
 * CAP_SYS_NICE, RLIMIT_NICE); elsewhere it is never lowered for long calls.
 * Observed from outside, in `/proc` (Linux).
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { WorkerRuntime } from "../../packages/runtime-wasm/worker/_worker_runtime.ts";
import { corpus, request, wasmHook } from "./_corpus.ts";

const basename = (path: string) => path.replace(/^.*\//, "").replace(/\.wasm$/, "");

/** Nice values of this process's plugin worker threads ("worker-N"), by thread id. */
function workerNices(): Map<string, number> {
  const nices = new Map<string, number>();
  for (const { name: tid } of Deno.readDirSync("/proc/self/task")) {
    try {
      if (!Deno.readTextFileSync(`/proc/self/task/${tid}/comm`).startsWith("worker-")) continue;
      const stat = Deno.readTextFileSync(`/proc/self/task/${tid}/stat`);
      nices.set(tid, Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]));
    } catch { /* the thread ended */ }
  }
  return nices;
}

/** Whether this process may raise a thread's priority back (root, or RLIMIT_NICE). */
function mayRaise(): boolean {
  return Deno.uid() === 0 || /Max nice priority\s+(\d+)/.exec(
        Deno.readTextFileSync("/proc/self/limits"),
      )?.[1] !== "0";
}

Deno.test({
  name: "a plugin worker drops to nice 19 during a long call and back to 10 after it",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const before = workerNices();
    // A long grace: the worker ends the call itself at its deadline (the main side would
    // otherwise terminate a worker that a loaded machine kept from getting there in time).
    const runtime = new WorkerRuntime({
      loadBytes: (hook) => corpus(hook.entry.runtime === "wasm" ? basename(hook.entry.path) : ""),
      workers: 1,
      graceMs: 30_000,
      start: true,
    });
    try {
      // A short call first: the worker is up and at the plugin workers' nice value.
      await runtime.run(request(wasmHook("guard_wasi"), undefined, { timeoutMs: 1000 }));
      const ours = () => new Map([...workerNices()].filter(([tid]) => !before.has(tid)));
      const [tid] = [...ours().keys()];
      ok(tid !== undefined, "the runtime's worker thread");
      // Where it could not raise itself back it is not lowered for long calls (it
      // would stay low): one step below the plugin workers' 10, from its probe.
      const base = mayRaise() ? 10 : 11;
      assertEquals(ours().get(tid), base);
      // A call that spins until its 400 ms deadline.
      const spinning = runtime.run(
        request(wasmHook("loop_forever"), undefined, { fuel: 1e12, timeoutMs: 400 }),
      );
      let settled = false;
      spinning.finally(() => settled = true);
      let during = base;
      while (!settled && during === base) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        during = ours().get(tid) ?? during;
      }
      assertEquals(during, mayRaise() ? 19 : base, "lowered while the call runs");
      const result = await spinning;
      assertEquals(result.failure?.code, "TIMEOUT");
      // The worker reports the result after it has raised itself back.
      assertEquals(ours().get(tid), base);
      // Short calls do not lower it.
      await runtime.run(request(wasmHook("guard_wasi"), undefined, { timeoutMs: 1000 }));
      assertEquals(ours().get(tid), base);
    } finally {
      await runtime.close?.();
    }
  },
});
