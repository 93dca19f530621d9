import assert from "node:assert/strict";
import { instrument, MAX_COUNTS } from "../../packages/rewriter/mod.ts";
import { isHookboxError } from "../../packages/core/errors.ts";
import { fixture, instantiate, OutOfFuel, wat } from "./_wat.ts";
import { atEngineLimit, manyOf } from "./_modules.ts";

type Fn = (...args: number[]) => number;

Deno.test("`instrument()` makes an infinite loop trap when the host refuses more fuel", async () => {
  const bytes = instrument(await fixture("loop_forever.wat"), { memoryPages: 1 });
  assert.ok(WebAssembly.validate(bytes));
  const { exports, refuels } = await instantiate(bytes, { slice: 10_000, slices: 3 });
  assert.throws(() => (exports.run as Fn)(), OutOfFuel);
  assert.equal(refuels(), 3);
});

Deno.test("`instrument()` lets a refuelled heavy loop finish with the unmetered result", async () => {
  const plain = await fixture("heavy_loop.wat");
  const { exports: raw } = await instantiate(plain);
  const expected = (raw.run as Fn)(200_000);
  const metered = instrument(plain, { memoryPages: 1 });
  const { exports, refuels } = await instantiate(metered, { slice: 100_000, slices: 1_000 });
  assert.equal((exports.run as Fn)(200_000), expected);
  assert.ok(refuels() > 10, `expected many refuels, got ${refuels()}`);
});

Deno.test("`instrument()` meters recursion", async () => {
  const bytes = instrument(await fixture("recursion.wat"), { memoryPages: 1 });
  const { exports } = await instantiate(bytes, { slice: 2_000, slices: 2 });
  assert.throws(() => (exports.forever as Fn)(0), OutOfFuel);
  const big = await instantiate(bytes, { slice: 1_000_000, slices: 100 });
  assert.equal((big.exports.fib as Fn)(20), 6765);
});

Deno.test("`instrument()` charges fuel proportional to the work done", async () => {
  const bytes = instrument(await fixture("heavy_loop.wat"), { memoryPages: 1 });
  const { exports } = await instantiate(bytes);
  const fuel = exports.__hookbox_fuel as WebAssembly.Global;
  fuel.value = 10n ** 12n;
  (exports.run as Fn)(1000);
  const spent = 10n ** 12n - (fuel.value as bigint);
  assert.ok(spent >= 1000n * 20n && spent <= 1000n * 60n, `spent ${spent}`);
});

Deno.test("`instrument()` with meterFuel false adds no fuel import", async () => {
  const bytes = instrument(await fixture("loop_forever.wat"), { memoryPages: 1, meterFuel: false });
  const mod = new WebAssembly.Module(bytes);
  assert.deepEqual(WebAssembly.Module.imports(mod), []);
});

Deno.test("`instrument()` caps memory so memory.grow fails past the cap", async () => {
  const bytes = instrument(await fixture("memory_grow.wat"), { memoryPages: 4, meterFuel: false });
  const { exports } = await instantiate(bytes);
  const grow = exports.grow as Fn;
  assert.equal(grow(2), 1);
  assert.equal(grow(2), -1);
  assert.equal(grow(1), 3);
  assert.equal(grow(1), -1);
  assert.equal((exports.size as Fn)(), 4);
  assert.ok(exports.memory instanceof WebAssembly.Memory, "memory is exported as `memory`");
});

Deno.test("`instrument()` keeps a smaller declared memory maximum", async () => {
  const bytes = instrument(await fixture("memory_big_min.wat"), { memoryPages: 2048 });
  const { exports } = await instantiate(bytes);
  const mem = exports.mem as WebAssembly.Memory;
  assert.equal(mem.buffer.byteLength, 512 * 65536);
  assert.throws(() => mem.grow(513), RangeError);
  const memories = WebAssembly.Module.exports(new WebAssembly.Module(bytes))
    .filter((e) => e.kind === "memory").map((e) => e.name);
  assert.deepEqual(memories, ["mem", "__hookbox_memory"], "no extra `memory` when one is exported");
});

Deno.test("`instrument()` refuses a memory whose minimum exceeds the cap", async () => {
  const bytes = await fixture("memory_big_min.wat");
  assert.throws(
    () => instrument(bytes, { memoryPages: 256 }),
    (e) => isHookboxError(e, "LIMIT_MEMORY"),
  );
});

for (const what of ["locals", "body"] as const) {
  Deno.test(`\`instrument()\` refuses a module whose ${what} metering would take past the engine's limit`, () => {
    const bytes = atEngineLimit(what);
    assert.ok(WebAssembly.validate(bytes as Uint8Array<ArrayBuffer>), "valid as it is");
    // Before, the metered module failed to validate and the error was INTERNAL (a bug of ours).
    assert.throws(
      () => instrument(bytes, { memoryPages: 1 }),
      (e) =>
        isHookboxError(e, "LIMIT_MODULE") &&
        /at a limit of WebAssembly engines that metering takes it past \(.*(local count too large|maximum function size)/
          .test(e.message),
    );
  });
}

for (const what of ["functions", "globals", "exports", "imports", "elements", "tags"] as const) {
  Deno.test(`\`instrument()\` takes ${MAX_COUNTS[what]} ${what} and refuses one more`, () => {
    // Source of the attack: counts no fuel pays for (a million empty functions held 95 MiB
    // compiled; 800,000 globals took 50–70 ms to instantiate, on every fresh call).
    const at = manyOf(what, MAX_COUNTS[what]);
    assert.ok(WebAssembly.validate(at as Uint8Array<ArrayBuffer>));
    instrument(at, { memoryPages: 1 });
    const over = manyOf(what, MAX_COUNTS[what] + 1);
    assert.ok(WebAssembly.validate(over as Uint8Array<ArrayBuffer>));
    assert.throws(
      () => instrument(over, { memoryPages: 1 }),
      (e) =>
        isHookboxError(e, "LIMIT_MODULE") &&
        e.message ===
          `module has ${MAX_COUNTS[what] + 1} ${
              what === "elements" ? "element segments" : what
            }, ` +
            `at most ${MAX_COUNTS[what]} are allowed`,
    );
  });
}

Deno.test("`instrument()` refuses imported memories", async () => {
  const bytes = await fixture("imported_memory.wat");
  assert.throws(
    () => instrument(bytes, { memoryPages: 16 }),
    (e) => isHookboxError(e, "PLUGIN_IMPORT_DENIED") && e.message.includes('"env"."memory"'),
  );
});

Deno.test("`instrument()` rejects bad options with a TypeError naming the option", async () => {
  const bytes = await fixture("loop_forever.wat");
  assert.throws(() => instrument(bytes, { memoryPages: -1 }), /memoryPages/);
  assert.throws(() => instrument(bytes, { memoryPages: 1, maxCallDepth: 0 }), /maxCallDepth/);
});

Deno.test("`instrument()` captureReturn stores the export's i32 in __hookbox_rc", async () => {
  const bytes = instrument(await fixture("indices.wat"), {
    memoryPages: 1,
    captureReturn: ["rc"],
    initialFuel: 1_000,
  });
  const { exports } = await instantiate(bytes, {
    slice: 1_000_000,
    slices: 10,
    imports: { env: { add: (a: number, b: number) => a + b, seed: 7 } },
  });
  (exports.__hookbox_call_rc as () => void)();
  assert.equal((exports.__hookbox_rc as WebAssembly.Global).value, 42);
});

Deno.test("`instrument()` captureReturn refuses a missing or ill-typed export", async () => {
  const bytes = await fixture("indices.wat");
  assert.throws(
    () => instrument(bytes, { memoryPages: 1, captureReturn: ["nope"] }),
    (e) => isHookboxError(e, "PLUGIN_EXPORT_MISSING"),
  );
  assert.throws(
    () => instrument(bytes, { memoryPages: 1, captureReturn: ["twice"] }),
    (e) => isHookboxError(e, "PLUGIN_INVALID"),
  );
});

Deno.test("`instrument()` exportGlobals exposes every mutable defined global", async () => {
  const bytes = instrument(await fixture("indices.wat"), {
    memoryPages: 1,
    exportGlobals: true,
    meterFuel: false,
  });
  const { exports } = await instantiate(bytes, {
    imports: { env: { add: (a: number, b: number) => a + b, seed: 7 } },
  });
  const counter = exports.__hookbox_g1 as WebAssembly.Global;
  assert.equal(counter.value, 7);
  (exports.bump as () => void)();
  assert.equal(counter.value, 8);
  counter.value = 100;
  assert.equal((exports.counter as Fn)(), 100);
  assert.equal((exports.__hookbox_g3 as WebAssembly.Global).value, 5n);
  assert.equal(exports.__hookbox_g2, undefined, "immutable globals are not exported");
});

Deno.test("`instrument()` publishes fuel spent in callees and loops to __hookbox_fuel", async () => {
  const bytes = instrument(await fixture("loop_calls.wat"), { memoryPages: 1 });
  const { exports } = await instantiate(bytes);
  const fuel = exports.__hookbox_fuel as WebAssembly.Global;
  fuel.value = 10n ** 12n;
  assert.equal((exports.run as Fn)(100), 5500);
  const spent = 10n ** 12n - (fuel.value as bigint);
  // 100 outer iterations x (outer body + 10 inner iterations): about 100 x 10 x 8 at least.
  assert.ok(spent >= 8_000n && spent <= 20_000n, `spent ${spent}`);
  const limited = await instantiate(bytes, { slice: 1_000, slices: 2 });
  assert.throws(() => (limited.exports.run as Fn)(100), OutOfFuel);
});

// Found by scripts/fuzz_rewriter.ts: a callee that throws never ran its
// `depth -= 1`, so every caught exception leaked one level of call depth and a
// function that catches in a loop was stopped as too deep.
/** A module whose `run` catches `n` exceptions thrown by a callee, with `try` or `try_table`. */
const catchLoop = (handler: string) =>
  wat(`(module
  (tag $e)
  (func $thrower (throw $e))
  (func (export "run") (param $n i32) (result i32)
    (loop $l
      ${handler}
      (br_if $l (local.tee $n (i32.sub (local.get $n) (i32.const 1)))))
    (i32.const 7)))`);

Deno.test("`instrument()` restores the call depth where a function catches a callee's exception", async () => {
  for (
    const handler of [
      "(try (do (call $thrower)) (catch_all))",
      "(block $h (try_table (catch_all $h) (call $thrower)))",
    ]
  ) {
    const out = instrument(catchLoop(handler), { memoryPages: 1, maxCallDepth: 10 });
    const { exports } = await instantiate(out, { slice: 1_000_000, slices: 100 });
    assert.equal((exports.run as (n: number) => number)(200), 7, handler);
    assert.equal((exports.__hookbox_depth as WebAssembly.Global).value, 0, "back to zero after");
  }
});
