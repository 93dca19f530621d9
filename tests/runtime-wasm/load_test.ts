/** Load-time refusals: size, hash pin, garbage, imports; and `loadPlugin()` codes. */
import { deepStrictEqual as assertEquals, ok, rejects } from "node:assert/strict";
import { isHookboxError } from "../../packages/core/errors.ts";
import { loadPlugin } from "../../packages/runtime-wasm/mod.ts";
import { corpus, corpusRuntime, request, shellEvent, wasmHook } from "./_corpus.ts";
import { runFailure } from "../../packages/core/runtime/failure.ts";
import { atEngineLimit } from "../rewriter/_modules.ts";

const GARBAGE = new TextEncoder().encode("this is not a wasm module, it is a text file\n");

/** A valid module padded with a custom section to `size` bytes. */
async function hugeModule(size: number): Promise<Uint8Array> {
  const base = await corpus("guard_wasi");
  const name = new TextEncoder().encode("pad");
  const payload = size - base.length - 1 - 5 - 1 - name.length;
  const out = new Uint8Array(size);
  out.set(base);
  let at = base.length;
  out[at++] = 0; // custom section
  const len = 1 + name.length + payload;
  for (let i = 0; i < 5; i++) out[at++] = ((len >>> (7 * i)) & 0x7f) | (i < 4 ? 0x80 : 0);
  out[at++] = name.length;
  out.set(name, at);
  return out;
}

Deno.test("run() refuses garbage bytes as an invalid module and serves the next call", async () => {
  const runtime = corpusRuntime({ garbage: GARBAGE });
  const result = await runtime.run(request(wasmHook("garbage")));
  assertEquals(result.exitCode, null);
  assertEquals(result.failure?.outcome, "error");
  ok(result.failure?.detail.startsWith("invalid module: "), result.failure?.detail);
  const next = await runtime.run(request(wasmHook("guard_wasi"), shellEvent("ls")));
  assertEquals(next.exitCode, 0);
});

Deno.test("run() refuses random bytes with a wasm header", async () => {
  const bytes = new Uint8Array(4096);
  crypto.getRandomValues(bytes);
  bytes.set([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
  const runtime = corpusRuntime({ random: bytes });
  const result = await runtime.run(request(wasmHook("random")));
  assertEquals(result.failure?.outcome, "error");
});

Deno.test("run() refuses a module over the size cap as limit/module", async () => {
  const runtime = corpusRuntime({ huge: await hugeModule(300 * 1024) });
  const result = await runtime.run(request(wasmHook("huge"), undefined, { moduleKb: 256 }));
  assertEquals(result.failure, runFailure("LIMIT_MODULE"));
  const fits = await runtime.run(request(wasmHook("huge"), shellEvent("ls"), { moduleKb: 512 }));
  assertEquals(fits.exitCode, 0);
});

Deno.test("run() refuses an event over the input cap without running", async () => {
  const runtime = corpusRuntime();
  const big = shellEvent("x".repeat(5000));
  const result = await runtime.run(request(wasmHook("guard_wasi"), big, { inputKb: 4 }));
  assertEquals(result, {
    exitCode: null,
    stdout: "",
    stderr: "",
    failure: runFailure("LIMIT_INPUT"),
  });
});

Deno.test("run() checks the sha256 pin against the original bytes", async () => {
  const runtime = corpusRuntime();
  const bytes = await corpus("guard_wasi");
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes.slice()));
  const sha = [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
  const good = await runtime.run(
    request(wasmHook("guard_wasi", { sha256: sha }), shellEvent("ls")),
  );
  assertEquals(good.exitCode, 0);
  const wrong = wasmHook("guard_wasi", { sha256: "0".repeat(64) });
  const bad = await runtime.run(request(wrong));
  assertEquals(bad.failure, runFailure("PLUGIN_HASH_MISMATCH"));
});

Deno.test("loadPlugin() reports the ABI and both hashes of a valid plugin", async () => {
  const info = await loadPlugin(await corpus("guard_extism"));
  assertEquals(info.abi, "extism");
  ok(/^[0-9a-f]{64}$/.test(info.sha256));
  ok(info.instrumentedSha256 !== info.sha256);
  assertEquals((await loadPlugin(await corpus("guard_wasi"))).abi, "wasi");
});

Deno.test("run() says which limit of its shape a module breaks, not the size cap it is under", async () => {
  const runtime = corpusRuntime({ locals: atEngineLimit("locals") });
  const result = await runtime.run(request(wasmHook("locals")));
  assertEquals([result.failure?.outcome, result.failure?.code], ["limit", "LIMIT_MODULE"]);
  ok(/local count too large/.test(result.failure?.message ?? ""), result.failure?.detail);
});

const CODES: [string, () => Promise<Uint8Array>, Record<string, unknown>, string][] = [
  ["garbage", () => Promise.resolve(GARBAGE), {}, "PLUGIN_INVALID"],
  ["a denied import", () => corpus("bad_import"), {}, "PLUGIN_IMPORT_DENIED"],
  ["a wrong pin", () => corpus("guard_wasi"), { sha256: "a".repeat(64) }, "PLUGIN_HASH_MISMATCH"],
  ["an oversized module", () => hugeModule(20 * 1024), { moduleKb: 16 }, "LIMIT_MODULE"],
];

for (const [what, bytes, options, code] of CODES) {
  Deno.test(`loadPlugin() throws ${code} for ${what}`, async () => {
    const input = await bytes();
    await rejects(loadPlugin(input, options), (err) => isHookboxError(err, code as never));
  });
}

Deno.test("loadPlugin() names the denied import in the message", async () => {
  await rejects(
    loadPlugin(await corpus("bad_import")),
    { message: "import wasi_snapshot_preview1.sock_accept is not allowed" },
  );
});
