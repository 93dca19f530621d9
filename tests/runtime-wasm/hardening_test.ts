/**
 * The hardening corpus: modules that hung, crashed or outran the host before
 * (invalid input, waits, tables, straight-line bulk work, many memories,
 * uncounted host copies, catchable host errors, fuel refunds, warm leaks).
 * Each ends with a coded failure, fresh and warm, twice in a row, and the same
 * runtime serves the next call normally.
 */
import { deepStrictEqual as assertEquals, match } from "node:assert/strict";
import type { EffectiveLimits, RunFailure } from "../../packages/core/runtime/types.ts";
import { assertServesNext, corpusRuntime, request, wasmHook, withoutFuel } from "./_corpus.ts";

interface Attack {
  name: string;
  limits?: Partial<EffectiveLimits>;
  outcome: RunFailure["outcome"];
  detail: string | RegExp;
}

const ATTACKS: Attack[] = [
  { name: "invalid_fuel_global", outcome: "error", detail: /^invalid module: .*does not validate/ },
  { name: "invalid_fuel_local", outcome: "error", detail: /^invalid module: .*does not validate/ },
  { name: "shared_wait", outcome: "error", detail: /^feature denied: memory 0 is shared/ },
  { name: "wait_unshared", outcome: "error", detail: /^feature denied: memory\.atomic\.wait/ },
  { name: "table_bomb", outcome: "limit", detail: "memory" },
  // The record says which limit of its shape the module breaks, not only "module".
  {
    name: "table_many",
    outcome: "limit",
    detail: /^module: module defines \d+ tables, at most 16 are allowed$/,
  },
  { name: "table_grow_bomb", outcome: "error", detail: "trap: unreachable" },
  { name: "table_fill_straight", limits: { fuel: 1_000_000 }, outcome: "limit", detail: "fuel" },
  {
    name: "bulk_straight",
    limits: { memoryMb: 80, fuel: 1e12, timeoutMs: 500 },
    outcome: "timeout",
    detail: "time",
  },
  { name: "bulk_straight", limits: { memoryMb: 80 }, outcome: "limit", detail: "fuel" },
  { name: "multi_memory", outcome: "error", detail: /^feature denied: module defines 4 memories/ },
  { name: "var_bomb_extism", limits: { memoryMb: 4 }, outcome: "limit", detail: "memory" },
  { name: "alloc_negative_extism", outcome: "limit", detail: "memory" },
  { name: "input_oob_catch_extism", outcome: "error", detail: /^trap: input offset \d+ is past/ },
  { name: "kernel_catch_wasi", outcome: "error", detail: /^host: load_u64: Offset is outside/ },
  { name: "try_table_refund", outcome: "limit", detail: "fuel" },
];

for (const attack of ATTACKS) {
  const limits = attack.limits ?? {};
  for (const isolation of ["fresh", "warm"]) {
    const label = `${attack.name} ${JSON.stringify(limits)} (${isolation})`;
    Deno.test(`run() stops ${label} with ${attack.outcome}`, async () => {
      const runtime = corpusRuntime();
      const hook = wasmHook(attack.name, { isolation });
      for (let i = 0; i < 2; i++) {
        const result = await runtime.run(request(hook, undefined, limits));
        assertEquals(result.exitCode, null);
        assertEquals(result.failure?.outcome, attack.outcome, JSON.stringify(result.failure));
        if (typeof attack.detail === "string") assertEquals(result.failure?.detail, attack.detail);
        else match(result.failure?.detail ?? "", attack.detail);
      }
      await assertServesNext(runtime);
      await runtime.close?.();
    });
  }
}

Deno.test("run() resets a warm memory exported under another name", async () => {
  const runtime = corpusRuntime();
  const hook = wasmHook("warm_alias_memory", { isolation: "warm" });
  for (const tenantId of ["tenant-a", "tenant-a", "tenant-b", "tenant-a"]) {
    const result = await runtime.run(request(hook, undefined, {}, { tenantId }));
    assertEquals(withoutFuel(result), { exitCode: 0, stdout: "1", stderr: "" });
  }
  await runtime.close?.();
});

Deno.test("run() answers EFAULT to a negative random_get pointer and writes nothing", async () => {
  const runtime = corpusRuntime();
  for (const isolation of ["fresh", "warm"]) {
    const result = await runtime.run(request(wasmHook("random_negative", { isolation })));
    assertEquals(withoutFuel(result), { exitCode: 21, stdout: "", stderr: "" });
  }
  await runtime.close?.();
});

Deno.test("run() initialises plugins without the caller's event", async () => {
  const runtime = corpusRuntime();
  for (const isolation of ["fresh", "warm"]) {
    const hook = wasmHook("init_event_extism", { isolation });
    for (let i = 0; i < 2; i++) {
      const result = await runtime.run(request(hook));
      assertEquals(withoutFuel(result), { exitCode: 0, stdout: "", stderr: "" });
    }
  }
  await runtime.close?.();
});
