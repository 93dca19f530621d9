/**
 * The upload plugin check runs in a worker of its own (so instrumenting and
 * compiling a big plugin never holds the thread that answers requests) and
 * reports what the runtime would: the same codes, a size cap, a deadline.
 */
import assert from "node:assert/strict";
import { checkPluginApart } from "../../packages/deno/serve/plugin_check.ts";
import { HookboxError } from "../../packages/core/errors.ts";
import { corpus } from "../runtime-wasm/_corpus.ts";

const LIMITS = { memoryMb: 64, moduleKb: 4096 };

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
    { bytes: await corpus("guard_wasi"), limits: LIMITS, path: "plugin.wasm" },
    1,
  ).then(() => null, (e) => e);
  assert.ok(err instanceof HookboxError);
  assert.equal(err.code, "COMPILE_FAILED");
  assert.match(err.message, /did not finish in 1 ms/);
});
