/**
 * The hostile corpus: every attack ends with the right outcome and detail, and
 * the same runtime serves the next call normally.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import type { EffectiveLimits, RunFailure } from "../../packages/core/runtime/types.ts";
import {
  assertServesNext,
  corpusRuntime,
  request,
  wasmHook,
  watBytes,
  withoutFuel,
} from "./_corpus.ts";
import { MAX_FAILURE_MESSAGE, runFailure } from "../../packages/core/runtime/failure.ts";
import {
  FUEL_PER_BYTE,
  HOST_CALL_FUEL,
  KERNEL_CALL_FUEL,
} from "../../packages/runtime-wasm/_fuel.ts";

interface Attack {
  name: string;
  limits?: Partial<EffectiveLimits>;
  failure: RunFailure;
}

const ATTACKS: Attack[] = [
  { name: "loop_forever", failure: runFailure("LIMIT_FUEL") },
  { name: "loop_forever_extism", failure: runFailure("LIMIT_FUEL") },
  { name: "catch_all_escape", failure: runFailure("LIMIT_FUEL") },
  {
    name: "loop_forever",
    limits: { fuel: 1e12, timeoutMs: 200 },
    failure: runFailure("TIMEOUT"),
  },
  {
    name: "loop_in_host_call",
    limits: { fuel: 1e12, timeoutMs: 200 },
    failure: runFailure("TIMEOUT"),
  },
  {
    name: "sleep_loop",
    limits: { fuel: 1e12, timeoutMs: 200 },
    failure: runFailure("TIMEOUT"),
  },
  { name: "memory_bomb", limits: { memoryMb: 4 }, failure: runFailure("LIMIT_MEMORY") },
  { name: "memory_bomb", limits: { memoryMb: 2 }, failure: runFailure("LIMIT_MEMORY") },
  {
    name: "alloc_bomb_extism",
    limits: { memoryMb: 64 },
    failure: runFailure("LIMIT_MEMORY"),
  },
  { name: "stack_bomb", failure: runFailure("LIMIT_STACK") },
  {
    name: "output_flood",
    limits: { outputKb: 256 },
    failure: runFailure("LIMIT_OUTPUT"),
  },
  {
    name: "bad_import",
    failure: runFailure("PLUGIN_IMPORT_DENIED", "wasi_snapshot_preview1.sock_accept"),
  },
  { name: "bad_import_env", failure: runFailure("PLUGIN_IMPORT_DENIED", "env.system") },
  { name: "trap_unreachable", failure: runFailure("TRAP", "unreachable") },
];

for (const attack of ATTACKS) {
  const limits = attack.limits ?? {};
  for (const isolation of ["fresh", "warm"]) {
    const label = `${attack.name} ${JSON.stringify(limits)} (${isolation})`;
    Deno.test(`run() stops ${label} with ${attack.failure.detail}`, async () => {
      const runtime = corpusRuntime();
      const hook = wasmHook(attack.name, { isolation });
      for (let i = 0; i < 2; i++) {
        const result = await runtime.run(request(hook, undefined, limits));
        assertEquals(result.exitCode, null);
        assertEquals(result.failure, attack.failure);
      }
      await assertServesNext(runtime);
      await runtime.close?.();
    });
  }
}

Deno.test("run() keeps output up to the cap when it stops an output flood", async () => {
  const runtime = corpusRuntime();
  const result = await runtime.run(request(wasmHook("output_flood"), undefined, { outputKb: 100 }));
  assertEquals(result.failure, runFailure("LIMIT_OUTPUT"));
  assertEquals(result.stdout.length, 100 * 1024);
  ok(/^x+$/.test(result.stdout));
});

Deno.test("run() keeps what a trapping plugin printed before the trap", async () => {
  const runtime = corpusRuntime();
  const result = await runtime.run(request(wasmHook("trap_unreachable")));
  assertEquals(result.stdout, "about to crash\n");
});

Deno.test("run() reports memory when a plugin exits non-zero after a failed grow", async () => {
  for (const isolation of ["fresh", "warm"]) {
    const runtime = corpusRuntime();
    const failure = runFailure("LIMIT_MEMORY");
    const exit = await runtime.run(
      request(wasmHook("memory_bomb_exit", { isolation }), undefined, { memoryMb: 2 }),
    );
    assertEquals(withoutFuel(exit), { exitCode: 1, stdout: "", stderr: "out of memory", failure });
    const extism = await runtime.run(
      request(wasmHook("memory_bomb_extism", { isolation }), undefined, { memoryMb: 2 }),
    );
    assertEquals(withoutFuel(extism), { exitCode: 1, stdout: "", stderr: "", failure });
    await assertServesNext(runtime);
    await runtime.close?.();
  }
});

Deno.test("run() lets a plugin recover from a failed grow", async () => {
  const runtime = corpusRuntime();
  for (const isolation of ["fresh", "warm"]) {
    const hook = wasmHook("memory_grow_handled", { isolation });
    for (let i = 0; i < 2; i++) {
      const result = await runtime.run(request(hook, undefined, { memoryMb: 2 }));
      assertEquals(withoutFuel(result), { exitCode: 0, stdout: "fallback", stderr: "" });
    }
  }
  await runtime.close?.();
});

Deno.test("run() keeps a trap without a failed grow a trap, even at the memory cap", async () => {
  const runtime = corpusRuntime();
  const result = await runtime.run(request(wasmHook("trap_at_cap"), undefined, { memoryMb: 1 }));
  assertEquals(result.failure, runFailure("TRAP", "memory access out of bounds"));
  await runtime.close?.();
});

Deno.test("run() charges fuel for host calls: a host-call loop is stopped by fuel alone", async () => {
  const runtime = corpusRuntime();
  const hook = wasmHook("host_call_burst");
  // A clock that never runs out (as on a deployed Worker): fuel is the only bound.
  const frozen = { timeoutMs: 600_000 };
  const stopped = await runtime.run(request(hook, undefined, { ...frozen, fuel: 1_000_000 }));
  assertEquals(stopped.failure, runFailure("LIMIT_FUEL"));
  // 10,000 host calls cost HOST_CALL_FUEL each, far more than the loop itself.
  const done = await runtime.run(request(hook, undefined, { ...frozen, fuel: 10_000_000 }));
  assertEquals([done.exitCode, done.stdout], [0, "done"]);
  ok(done.fuel! >= 10_000 * HOST_CALL_FUEL, `used ${done.fuel}`);
  await runtime.close?.();
});

Deno.test("run() charges fuel for every Extism kernel call: a loop of cheap ones is stopped by fuel", async () => {
  const runtime = corpusRuntime();
  const hook = wasmHook("kernel_call_burst_extism");
  const frozen = { timeoutMs: 600_000 };
  // A million calls of load_u8, store_u8, load_u64, length and input_load_u8 (200,000 rounds).
  const stopped = await runtime.run(request(hook, undefined, { ...frozen, fuel: 50_000_000 }));
  assertEquals(stopped.failure, runFailure("LIMIT_FUEL"));
  const done = await runtime.run(request(hook, undefined, { ...frozen, fuel: 1_000_000_000 }));
  assertEquals(done.exitCode, 0);
  ok(done.fuel! >= 1_000_000 * KERNEL_CALL_FUEL, `used ${done.fuel}`);
  await runtime.close?.();
});

Deno.test("run() charges fuel per byte an Extism call copies: an output_set loop is stopped by fuel", async () => {
  const runtime = corpusRuntime();
  const hook = wasmHook("output_set_loop_extism");
  const frozen = { timeoutMs: 600_000 };
  // 2,000 copies of 32 KiB: only a per-byte charge makes them cost more than 10 million.
  const stopped = await runtime.run(request(hook, undefined, { ...frozen, fuel: 10_000_000 }));
  assertEquals(stopped.failure, runFailure("LIMIT_FUEL"));
  const done = await runtime.run(request(hook, undefined, { ...frozen, fuel: 500_000_000 }));
  assertEquals([done.failure, done.exitCode, done.stdout.length], [undefined, 0, 32_768]);
  ok(done.fuel! >= 2_000 * 32_768 * FUEL_PER_BYTE, `used ${done.fuel}`);
  await runtime.close?.();
});

Deno.test("run() charges fuel per byte written: an output flood under a large output cap is stopped by fuel", async () => {
  const runtime = corpusRuntime();
  // 64 KiB writes forever, with room for 64 MiB of output and no deadline: only
  // the per-byte charge bounds the host's work of taking the output in.
  const fuel = 10_000_000;
  const result = await runtime.run(
    request(wasmHook("output_flood"), undefined, { timeoutMs: 600_000, fuel, outputKb: 65_536 }),
  );
  assertEquals(result.failure, runFailure("LIMIT_FUEL"));
  // The write that overdraws the budget is the last one taken in.
  const taken = result.stdout.length;
  ok(taken <= fuel / FUEL_PER_BYTE + 65_536, `${taken} bytes taken in`);
  await runtime.close?.();
});

Deno.test("run() remembers a refused plugin: its bytes are read and checked once, not per event", async () => {
  let reads = 0;
  const runtime = corpusRuntime({}, {
    loadBytes: () => {
      reads++;
      return Promise.resolve(new TextEncoder().encode("not a module"));
    },
  });
  const hook = wasmHook("garbage");
  for (let i = 0; i < 3; i++) {
    const result = await runtime.run(request(hook));
    assertEquals(result.failure?.code, "PLUGIN_INVALID");
  }
  assertEquals(reads, 1);
  // A read that fails (not a refusal) is retried.
  let attempts = 0;
  const flaky = corpusRuntime({}, {
    loadBytes: () => {
      attempts++;
      return Promise.reject(new Error("store unavailable"));
    },
  });
  for (let i = 0; i < 2; i++) {
    assertEquals((await flaky.run(request(hook))).failure?.code, "LOAD_FAILED");
  }
  assertEquals(attempts, 2);
  await runtime.close?.();
  await flaky.close?.();
});

Deno.test("a plugin's own text in a failure is clipped: a 200,000-character import name", async () => {
  // The name reaches every result and audit row of every event the hook sees.
  const name = "x".repeat(200_000);
  const bytes = watBytes(
    "long_import",
    `(module (import "env" "${name}" (func)) (func (export "_start")))`,
  );
  const runtime = corpusRuntime({ long_import: bytes });
  try {
    const { failure } = await runtime.run(request(wasmHook("long_import")));
    assertEquals(failure?.code, "PLUGIN_IMPORT_DENIED");
    ok(
      failure.detail.startsWith(`import denied: env.${"x".repeat(100)}`),
      failure.detail.slice(0, 80),
    );
    ok(
      failure.detail.length < MAX_FAILURE_MESSAGE + 100,
      `detail of ${failure.detail.length} characters`,
    );
    ok(
      failure.detail.endsWith(`(${200_004 - MAX_FAILURE_MESSAGE} more characters)`),
      failure.detail.slice(-60),
    );
    await assertServesNext(runtime);
  } finally {
    await runtime.close?.();
  }
});
