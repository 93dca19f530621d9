/**
 * One engine, many hooks (`shareCode`): JS hooks — the QuickJS engine with
 * each script's snapshot — load as one instrumented module whatever their
 * script and their policy's memory cap, each keeping its own memory image,
 * its own cap and its own state, and answering exactly as when each has a
 * module of its own.
 */
import { deepStrictEqual as assertEquals, equal, ok } from "node:assert/strict";
import { compileJsHook } from "../../packages/compile/js.ts";
import { createWasmRuntime, preparePlugin } from "../../packages/runtime-wasm/mod.ts";
import { inspectModule } from "../../packages/rewriter/mod.ts";
import type { RunResult } from "../../packages/core/runtime/types.ts";
import { fakeHook } from "../_helpers.ts";
import { fixture, LIMITS, TEST_CACHE } from "../compile/_js_runner.ts";

const NAMES = [
  "fn_state.mjs",
  "cjs_guard.js",
  "fn_guard.mjs",
  "memory_hog.js",
  "alloc_20mb.js",
  "uncaught.js",
] as const;
const plugins = Object.fromEntries(
  await Promise.all(
    NAMES.map(async (name) =>
      [name, (await compileJsHook(fixture(name), { cacheDir: TEST_CACHE })).bytes] as const
    ),
  ),
);

Deno.test("JS hooks of different scripts and memory caps prepare to one instrumented module", async () => {
  const prepared = await Promise.all(
    NAMES.slice(0, 3).flatMap((name) =>
      [16, 64].map((memoryMb) =>
        preparePlugin(plugins[name]!, {
          limits: { memoryMb, moduleKb: 8192 },
          isolation: "fresh",
          shareCode: true,
        })
      )
    ),
  );
  equal(new Set(prepared.map((p) => p.instrumentedSha256)).size, 1, "one module for all");
  equal(new Set(prepared.map((p) => p.sha256)).size, 3, "three scripts");
  for (const p of prepared) ok(p.runs !== undefined && p.runs.length > 0, "each keeps its image");
  // Without shareCode each script is a module of its own, its cap in it.
  const own = await Promise.all(
    [16, 64].map((memoryMb) =>
      preparePlugin(plugins[NAMES[0]]!, {
        limits: { memoryMb, moduleKb: 8192 },
        isolation: "fresh",
      })
    ),
  );
  ok(own[0]!.instrumentedSha256 !== own[1]!.instrumentedSha256);
  // Shared, the cap is the maximum of the memory the host hands each: the same pages
  // (16 MiB and 64 MiB, less the engine's table).
  assertEquals(
    prepared.slice(0, 2).map((p) => p.memoryImport!.max),
    own.map((p) => p.memoryImport!.max),
  );
  ok(own[0]!.memoryImport!.max < own[1]!.memoryImport!.max);
});

Deno.test("warm JS hooks share one module that tracks their writes, its block map imported", async () => {
  const prepare = (name: string, memoryMb: number, isolation: "fresh" | "warm") =>
    preparePlugin(plugins[name as typeof NAMES[number]]!, {
      limits: { memoryMb, moduleKb: 8192 },
      isolation,
      shareCode: true,
    });
  const warm = await Promise.all([prepare(NAMES[0], 16, "warm"), prepare(NAMES[1], 64, "warm")]);
  const fresh = await prepare(NAMES[0], 16, "fresh");
  equal(warm[0]!.instrumentedSha256, warm[1]!.instrumentedSha256, "one module for warm hooks");
  ok(
    warm[0]!.instrumentedSha256 !== fresh.instrumentedSha256,
    "fresh ones do not pay for tracking",
  );
  const memories = (bytes: Uint8Array) =>
    inspectModule(bytes).imports.filter((i) => i.kind === "memory").map((i) => i.name);
  // The block map follows the cap of the memory the host hands each instance.
  assertEquals(memories(warm[0]!.bytes), ["memory", "blocks"]);
  assertEquals(memories(fresh.bytes), ["memory"]);
  ok(inspectModule(warm[0]!.bytes).exports.some((e) => e.name === "__hookbox_dirty"));
  // Tracking changes neither the cap nor the image.
  equal(warm[0]!.memoryImport!.max, fresh.memoryImport!.max);
  assertEquals(warm[0]!.runs, fresh.runs);
});

/** A hook name for a fixture's file name. */
const hookName = (file: string) => file.replace(/\.\w+$/, "").replaceAll("_", "-");

/** Runs each named hook `times` times in turn on one runtime; answers by hook. */
async function answers(
  shareCode: boolean,
  isolation: "fresh" | "warm",
  times: number,
  memoryMb = 64,
): Promise<Record<string, Pick<RunResult, "exitCode" | "stdout" | "stderr" | "failure">[]>> {
  const runtime = createWasmRuntime({
    loadBytes: (hook) => Promise.resolve(plugins[NAMES.find((n) => hookName(n) === hook.name)!]!),
    shareCode,
  });
  const hooks = NAMES.map((name) =>
    fakeHook({ name: hookName(name), isolation }, {
      entry: { runtime: "wasm", format: "js", path: fixture(name) },
    })
  );
  const out: Record<string, Pick<RunResult, "exitCode" | "stdout" | "stderr" | "failure">[]> = {};
  const event = (command: string) =>
    new TextEncoder().encode(JSON.stringify({
      event_type: "pre-tool-call",
      session_id: "s",
      tool_name: "Bash",
      tool_input: { command },
    }));
  try {
    for (let i = 0; i < times; i++) {
      for (const hook of hooks) {
        const { exitCode, stdout, stderr, failure } = await runtime.run({
          hook,
          input: event(i % 2 ? "rm -rf /" : "ls"),
          env: {},
          limits: { ...LIMITS, memoryMb, timeoutMs: 60_000 },
          tenantId: "t",
        });
        (out[NAMES[hooks.indexOf(hook)]!] ??= []).push({
          exitCode,
          stdout,
          stderr,
          ...(failure ? { failure: { code: failure.code } as never } : {}),
        });
      }
    }
  } finally {
    await runtime.close?.();
  }
  return out;
}

for (const isolation of ["fresh", "warm"] as const) {
  Deno.test(`${isolation} JS hooks sharing one module answer as with modules of their own`, async () => {
    const shared = await answers(true, isolation, 3);
    assertEquals(shared, await answers(false, isolation, 3));
    // And what they answer: each its own script and state, the memory hog stopped at its cap.
    assertEquals(shared["fn_state.mjs"]!.map((a) => a.stdout.trim()), [
      '{"reason":"shell call 1"}',
      '{"reason":"shell call 1"}',
      '{"reason":"shell call 1"}',
    ]);
    assertEquals(shared["cjs_guard.js"]!.map((a) => a.exitCode), [0, 2, 0]);
    for (const a of shared["memory_hog.js"]!) equal(a.failure?.code, "LIMIT_MEMORY");
    // Stack traces at the author's line: each hook's own table, not the shared module's.
    ok(
      shared["uncaught.js"]![0]!.stderr.includes("uncaught.js:4"),
      shared["uncaught.js"]![0]!.stderr,
    );
  });
}

Deno.test("each hook sharing the module keeps its own policy's memory cap", async () => {
  // The same module: 20 MiB fits a 64 MiB cap, not an 8 MiB one.
  const small = await answers(true, "fresh", 1, 8);
  const large = await answers(true, "fresh", 1, 64);
  equal(small["alloc_20mb.js"]![0]!.failure?.code, "LIMIT_MEMORY");
  assertEquals(large["alloc_20mb.js"]![0]!.stdout, "allocated 20 MiB\n");
  equal(small["cjs_guard.js"]![0]!.exitCode, 0);
});
