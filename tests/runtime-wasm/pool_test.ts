import assert from "node:assert/strict";
import {
  MAX_WARM_PER_KEY,
  MIN_INSTANCE_BYTES,
  WarmPool,
} from "../../packages/runtime-wasm/instance/_pool.ts";

/** A unit of size: every idle instance counts at least MIN_INSTANCE_BYTES. */
const U = MIN_INSTANCE_BYTES;
import {
  type PluginInstance,
  PluginInstance as PluginInstanceClass,
} from "../../packages/runtime-wasm/instance/_instance.ts";
import { corpusRuntime, request, shellEvent, wasmHook } from "./_corpus.ts";

/** A stand-in instance that records whether it was closed. */
function fake(byteLength = 0): PluginInstance & { closed: boolean } {
  const f = {
    busy: false,
    reusable: true,
    closed: false,
    byteLength,
    close() {
      f.closed = true;
      return Promise.resolve();
    },
  };
  return f as unknown as PluginInstance & { closed: boolean };
}

Deno.test("WarmPool keeps up to MAX_WARM_PER_KEY instances per key for concurrent calls and reuses them", async () => {
  const pool = new WarmPool();
  const made = [];
  for (let i = 0; i < MAX_WARM_PER_KEY; i++) {
    assert.equal(pool.acquire("k"), null, "room for another warm instance");
    const instance = fake();
    pool.add("k", instance);
    made.push(instance);
  }
  assert.equal(pool.acquire("k"), "busy", "all in use: the caller runs a throw-away one");
  await pool.release("k", made[0]!);
  assert.equal(pool.acquire("k"), made[0], "a released instance is handed out again");
  assert.equal(pool.acquire("other"), null, "keys are apart (tenants never share)");
});

Deno.test("WarmPool closes and forgets an instance that failed, and closes idle ones on close()", async () => {
  const pool = new WarmPool();
  const failed = fake();
  pool.add("k", failed);
  failed.reusable = false;
  await pool.release("k", failed);
  assert.equal(failed.closed, true);
  assert.equal(pool.acquire("k"), null, "its place is free again");
  const idle = fake();
  pool.add("k", idle);
  await pool.release("k", idle);
  const busy = fake();
  pool.add("k", busy);
  await pool.close();
  assert.equal(idle.closed, true);
  assert.equal(busy.closed, false, "a busy instance is closed when its call releases it");
  await pool.release("k", busy);
  assert.equal(busy.closed, true);
});

Deno.test("WarmPool caps the bytes idle instances hold: the least recently used are closed first", async () => {
  const pool = new WarmPool(250 * U);
  const a = fake(100 * U), b = fake(100 * U), c = fake(100 * U);
  for (const [key, instance] of [["a", a], ["b", b], ["c", c]] as const) {
    assert.equal(pool.acquire(key), null);
    pool.add(key, instance);
  }
  await pool.release("a", a);
  await pool.release("b", b);
  assert.equal(pool.idleBytes, 200 * U);
  // a is used again, so b is now the least recently used.
  assert.equal(pool.acquire("a"), a);
  await pool.release("a", a);
  await pool.release("c", c);
  assert.deepEqual([a.closed, b.closed, c.closed], [false, true, false]);
  assert.equal(pool.idleBytes, 200 * U);
  assert.equal(pool.acquire("b"), null, "b's warm instance is gone: the next call makes one");
  assert.equal(pool.acquire("c"), c);
  // One instance over the whole cap is not kept at all.
  const big = fake(1000 * U);
  pool.add("big", big);
  await pool.release("big", big);
  assert.equal(big.closed, true);
  assert.equal(pool.acquire("big"), null);
});

Deno.test("WarmPool past its cap closes the instances of the tenant holding the most, not every tenant's", async () => {
  const pool = new WarmPool(250 * U);
  const quiet = [fake(40 * U), fake(40 * U), fake(40 * U)];
  for (const [i, instance] of quiet.entries()) {
    pool.add(`quiet\0h${i}`, instance);
    await pool.release(`quiet\0h${i}`, instance);
  }
  // Another tenant's hook ends each call holding a big memory: alone over the cap,
  // and the most recently used, so a plain LRU would close the quiet tenant's first.
  for (let round = 0; round < 3; round++) {
    const big = fake(1000 * U);
    const key = "noisy\0bomb";
    assert.equal(pool.acquire(key), null);
    pool.add(key, big);
    await pool.release(key, big);
    assert.equal(big.closed, true, "the tenant over the cap loses its own instance");
  }
  assert.deepEqual(quiet.map((q) => q.closed), [false, false, false]);
  assert.equal(pool.idleBytes, 120 * U);
  // Tenants under the cap share it: the one holding the most gives way first.
  const mid = fake(100 * U), small = fake(40 * U);
  for (const [key, instance] of [["mid\0h", mid], ["small\0h", small]] as const) {
    pool.add(key, instance);
    await pool.release(key, instance);
  }
  assert.deepEqual(quiet.map((q) => q.closed), [true, false, false], "quiet held 120, mid 100");
  assert.deepEqual([mid.closed, small.closed], [false, false]);
  assert.equal(pool.idleBytes, 220 * U);
});

Deno.test("WarmPool counts an instance of an empty memory too, and keeps at most maxCount", async () => {
  // Source of the attack: instances of 0-page memories counted 0 bytes and were kept
  // without number; each engine memory holds kernel mappings, and V8 ends the process
  // when it cannot map another (about 32,000 live memories).
  const pool = new WarmPool(10 * U, 1_000);
  const empty = Array.from({ length: 12 }, () => fake(0));
  for (const [i, instance] of empty.entries()) {
    pool.add(`t\0h${i}`, instance);
    await pool.release(`t\0h${i}`, instance);
  }
  assert.equal(pool.idleCount, 10, "ten of MIN_INSTANCE_BYTES fill 10 × U");
  assert.deepEqual(empty.map((e) => e.closed).filter(Boolean).length, 2);
  const counted = new WarmPool(1_000 * U, 3);
  const small = Array.from({ length: 5 }, () => fake(U));
  for (const [i, instance] of small.entries()) {
    counted.add(`t\0h${i}`, instance);
    await counted.release(`t\0h${i}`, instance);
  }
  assert.equal(counted.idleCount, 3, "at most maxCount idle, whatever the bytes allow");
});

Deno.test("a runtime with warmBytes 0 prepares a warm hook as a fresh one: no write tracking, a host-supplied memory", async () => {
  const hook = wasmHook("guard_wasi", { isolation: "warm" });
  const compiled: WebAssembly.Module[] = [];
  const compile = async (bytes: Uint8Array) => {
    const module = await WebAssembly.compile(bytes as Uint8Array<ArrayBuffer>);
    compiled.push(module);
    return module;
  };
  const shape = (module: WebAssembly.Module) => ({
    tracked: WebAssembly.Module.exports(module).some((e) => e.name === "__hookbox_dirty"),
    memoryImported: WebAssembly.Module.imports(module).some((i) => i.kind === "memory"),
  });
  const plugin = () =>
    compiled.find((m) => WebAssembly.Module.exports(m).some((e) => e.name === "_start"))!;
  for (
    const [options, expected] of [
      [{ warmBytes: 0 }, { tracked: false, memoryImported: true }],
      [{}, { tracked: true, memoryImported: false }],
    ] as const
  ) {
    compiled.length = 0;
    const runtime = corpusRuntime({}, { ...options, compile });
    try {
      assert.equal((await runtime.run(request(hook, shellEvent("rm -rf /")))).exitCode, 2);
      assert.deepEqual(shape(plugin()), expected, JSON.stringify(options));
    } finally {
      await runtime.close?.();
    }
  }
});

Deno.test("a runtime with warmBytes 0 keeps no warm instance: each call of a warm hook runs fresh, takes no snapshot and answers alike", async () => {
  const hook = wasmHook("guard_wasi", { isolation: "warm" });
  const event = shellEvent("rm -rf /");
  const kept = corpusRuntime();
  const none = corpusRuntime({}, { warmBytes: 0 });
  const snapshot = PluginInstanceClass.prototype.snapshot;
  let snapshots = 0;
  PluginInstanceClass.prototype.snapshot = function (...args) {
    snapshots++;
    return snapshot.apply(this, args);
  };
  try {
    await none.run(request(hook, event));
    assert.equal(snapshots, 0, "no snapshot for an instance nobody keeps");
    await kept.run(request(hook, event));
    assert.equal(snapshots, 1);
    for (let i = 0; i < 3; i++) {
      const [a, b] = [await kept.run(request(hook, event)), await none.run(request(hook, event))];
      assert.deepEqual([b.exitCode, b.stdout, b.stderr, b.failure], [
        a.exitCode,
        a.stdout,
        a.stderr,
        a.failure,
      ]);
      assert.equal(b.exitCode, 2);
    }
    assert.equal(kept.stats!().warmInstances, 1);
    assert.equal(none.stats!().warmInstances, 0);
  } finally {
    PluginInstanceClass.prototype.snapshot = snapshot;
    await kept.close?.();
    await none.close?.();
  }
});
