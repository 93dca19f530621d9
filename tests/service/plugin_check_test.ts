/**
 * The upload plugin check runs in a worker of its own (so instrumenting and
 * compiling a big plugin never holds the thread that answers requests) and
 * reports what the runtime would: the same codes, a size cap, a deadline.
 */
import assert from "node:assert/strict";
import {
  checkPluginApart,
  pluginCheckWorkersStarted,
} from "../../packages/deno/serve/plugin_check.ts";
import { HookboxError } from "../../packages/core/errors.ts";
import { corpus, watBytes } from "../runtime-wasm/_corpus.ts";

const LIMITS = { memoryMb: 64, moduleKb: 4096 };

/**
 * A plugin of 100,000 small functions (about 1 MB, the most a module may
 * have): its check takes hundreds of milliseconds, so a deadline of 1 ms
 * always passes first.
 */
const slowToCheck = (() => {
  let bytes: Uint8Array | undefined;
  return () => {
    const fns = Array.from(
      { length: 99_999 }, // and `_start`
      (_, i) => `(func (result i32) (i32.add (i32.const ${i}) (i32.const 2)))`,
    );
    return bytes ??= watBytes(
      "slow_to_check",
      `(module (memory (export "memory") 1) ${fns.join("\n")} (func (export "_start")))`,
    );
  };
})();

async function codeOf(work: Promise<void>): Promise<string> {
  const err = await work.then(() => null, (e) => e);
  assert.ok(err instanceof HookboxError, `a HookboxError, got ${err}`);
  return err.code;
}

Deno.test("the plugin check passes a plugin the runtime loads and names what is wrong with others", async () => {
  await checkPluginApart({
    bytes: await corpus("guard_wasi"),
    limits: LIMITS,
    path: "plugin.wasm",
  });
  assert.equal(
    await codeOf(
      checkPluginApart({
        bytes: new TextEncoder().encode("not wasm"),
        limits: LIMITS,
        path: "p.wasm",
      }),
    ),
    "PLUGIN_INVALID",
  );
  assert.equal(
    await codeOf(
      checkPluginApart({ bytes: await corpus("bad_import"), limits: LIMITS, path: "p.wasm" }),
    ),
    "PLUGIN_IMPORT_DENIED",
  );
  const big = new Uint8Array(5 * 1024 * 1024);
  big.set([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]);
  assert.equal(
    await codeOf(checkPluginApart({ bytes: big, limits: LIMITS, path: "p.wasm" })),
    "LIMIT_MODULE",
  );
});

Deno.test("a plugin check past its deadline is stopped and refused", async () => {
  const err = await checkPluginApart(
    { bytes: slowToCheck(), limits: LIMITS, path: "plugin.wasm" },
    1,
  ).then(() => null, (e) => e);
  assert.ok(err instanceof HookboxError);
  assert.equal(err.code, "COMPILE_FAILED");
  assert.match(err.message, /did not finish in 1 ms/);
});

Deno.test("plugin checks share their workers; the check after an overrun gets its own answer", async () => {
  const guard = { bytes: await corpus("guard_wasi"), limits: LIMITS, path: "plugin.wasm" };
  const before = pluginCheckWorkersStarted();
  for (let i = 0; i < 5; i++) await checkPluginApart(guard);
  // Starting a worker holds the server's request thread ~10 ms: one serves them all.
  assert.ok(pluginCheckWorkersStarted() - before <= 1, "the checks reuse a worker");
  const bad = { bytes: await corpus("bad_import"), limits: LIMITS, path: "p.wasm" };
  const late = await checkPluginApart({ ...guard, bytes: slowToCheck() }, 1)
    .then(() => null, (e) => e);
  assert.equal(late?.code, "COMPILE_FAILED");
  // The next check gets its own answer (an overrun worker is ended: worker_pool_test.ts).
  assert.equal(await codeOf(checkPluginApart(bad)), "PLUGIN_IMPORT_DENIED");
});

Deno.test("plugin checks at once never wait for each other; two workers are kept", async () => {
  const guard = { bytes: await corpus("guard_wasi"), limits: LIMITS, path: "plugin.wasm" };
  const slow = { ...guard, bytes: slowToCheck() };
  // Three slow checks at once: none waits behind another's (each gets a worker).
  const before = pluginCheckWorkersStarted();
  await Promise.all([checkPluginApart(slow), checkPluginApart(slow), checkPluginApart(slow)]);
  const after = pluginCheckWorkersStarted();
  assert.ok(after - before >= 1 && after - before <= 3);
  // Two of them are kept: the next two checks, one after another, start none.
  await checkPluginApart(guard);
  await checkPluginApart(guard);
  assert.equal(pluginCheckWorkersStarted(), after);
});
