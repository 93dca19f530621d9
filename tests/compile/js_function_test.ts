/**
 * Function-style JS hooks (`export default function (event)`): evaluated once
 * when the plugin is built, then only the function runs per call. Every
 * fixture runs as compiled WebAssembly (fresh and warm) and natively under
 * `node` through tests/fixtures/js/_function_host.mjs, which implements the
 * documented answer mapping; exit code, stdout and stderr must be identical.
 */
import assert from "node:assert/strict";
import { compileJsHook } from "../../packages/compile/js.ts";
import { isHookboxError } from "../../packages/core/errors.ts";
import { assertRunsLike, fixture, type Observed, TEST_CACHE, wasmRunner } from "./_js_runner.ts";
import { runWithStdin, tempDir } from "../_helpers.ts";

const base = { timestamp: "2025-01-01T00:00:00Z", session_id: "s-1", work_dir: "/work" };
const tool = (tool_name: string, tool_input: Record<string, unknown>) =>
  JSON.stringify({ ...base, event_type: "pre-tool-call", tool_name, tool_input });
const EVENTS = [
  tool("Bash", { command: "rm -rf /" }),
  tool("Bash", { command: "ls -la" }),
  tool("Bash", { command: "git push origin main" }),
  tool("Bash", { command: "sudo shutdown now" }),
  tool("Write", { file_path: "/etc/hosts", content: "x" }),
  tool("Read", { file_path: "/work/ä.txt" }),
  JSON.stringify({ ...base, event_type: "pre-agent-turn", prompt: "héllo wörld ✓ 🎉" }),
];

function nativeFunctionRun(name: string, input: string): Promise<Observed> {
  return runWithStdin("node", [fixture("_function_host.mjs"), fixture(name)], input, {
    clearEnv: true,
  });
}

for (const name of ["fn_guard.mjs", "fn_async_exit.mjs", "fn_state.mjs", "fn_immortal.mjs"]) {
  for (const isolation of ["fresh", "warm"] as const) {
    Deno.test(`function-style ${name} (${isolation}) answers like node`, async () => {
      const wasm = await wasmRunner(name, {}, [], isolation);
      try {
        await assertRunsLike(wasm, [...EVENTS, ...EVENTS], (e) => nativeFunctionRun(name, e), name);
      } finally {
        await wasm.close();
      }
    });
  }
}

Deno.test("function-style: garbage past the memory cap is collected, snapshot values are not", async () => {
  // fn_immortal makes ~40 MB of cyclic garbage per call: under a 16 MiB cap the collector must
  // free it (a call's objects are mortal) while every snapshot value survives.
  for (const isolation of ["fresh", "warm"] as const) {
    const wasm = await wasmRunner("fn_immortal.mjs", { memoryMb: 12 }, [], isolation);
    try {
      const event = tool("Bash", { command: "ls" });
      const expected = await nativeFunctionRun("fn_immortal.mjs", event);
      for (let i = 0; i < 3; i++) {
        const actual = await wasm.run(event);
        assert.equal(actual.failure, undefined, JSON.stringify(actual.failure));
        assert.deepEqual([actual.exitCode, actual.stdout], [expected.exitCode, expected.stdout]);
      }
    } finally {
      await wasm.close();
    }
  }
});

Deno.test("function-style: an uncaught error exits 1 with the error on stderr, like node", async () => {
  const wasm = await wasmRunner("fn_throws.mjs");
  try {
    const event = tool("Write", { file_path: "/x" });
    const expected = await nativeFunctionRun("fn_throws.mjs", event);
    const actual = await wasm.run(event);
    assert.deepEqual([actual.exitCode, expected.exitCode], [1, 1]);
    assert.match(expected.stderr, /TypeError: cannot judge Write/);
    assert.match(actual.stderr, /TypeError: cannot judge Write/);
    assert.equal((await wasm.run(tool("Read", {}))).exitCode, 0);
  } finally {
    await wasm.close();
  }
});

Deno.test("function-style: a default export that is not a function is refused when built", async () => {
  await assert.rejects(
    compileJsHook(fixture("fn_not_a_function.mjs"), { cacheDir: TEST_CACHE }),
    (err) => {
      assert.ok(isHookboxError(err) && err.code === "COMPILE_FAILED", String(err));
      assert.match(err.message, /default export is not a function/);
      return true;
    },
  );
});

Deno.test("function-style: a top level that never ends fails the build at its CPU limit", async () => {
  await assert.rejects(
    compileJsHook(fixture("fn_top_level_loop.mjs"), { cacheDir: TEST_CACHE, buildCpuMs: 2000 }),
    (err) => {
      assert.ok(isHookboxError(err) && err.code === "COMPILE_FAILED", String(err));
      assert.match(err.message, /did not finish building in 2000 ms of CPU time/);
      return true;
    },
  );
});

Deno.test("function-style: a build that failed is not tried again until its sources change", async () => {
  const cacheDir = await tempDir("hookbox-failed-builds-");
  const scripts = `${await tempDir("hookbox-hook-")}/loop/scripts`;
  await Deno.mkdir(scripts, { recursive: true });
  const entry = `${scripts}/run.mjs`;
  await Deno.copyFile(fixture("fn_top_level_loop.mjs"), entry);
  // Room for Wizer's own compile of the engine (1–2 s of CPU) when the hook is fixed.
  const build = () => compileJsHook(entry, { cacheDir, buildCpuMs: 4000 });
  const failure = (pattern: RegExp) => (err: unknown) => {
    assert.ok(isHookboxError(err, "COMPILE_FAILED"), String(err));
    assert.match(err.message, pattern);
    return true;
  };
  await assert.rejects(
    build(),
    failure(/did not finish building in 4000 ms of CPU time \(a function-style/),
  );
  // The same sources: the recorded failure, without running the top level again.
  await assert.rejects(
    build(),
    failure(
      /did not finish building in 4000 ms of CPU time .* \(as when these sources were last built; change them to build again\)$/,
    ),
  );
  // Fixed, it builds.
  await Deno.writeTextFile(entry, "export default function () { return { reason: 'fixed' }; }\n");
  const built = await build();
  assert.equal(built.cached, false);
});

Deno.test("function-style: calls that find a hook being built wait for that build, not a build each", async () => {
  const cacheDir = await tempDir("hookbox-one-build-");
  const build = () =>
    compileJsHook(fixture("fn_top_level_loop.mjs"), { cacheDir, buildCpuMs: 1000 });
  // A daemon's calls at once, or a build that outlived its call's deadline and the next call.
  const failures = await Promise.all([build(), build(), build()].map((b) => b.catch((e) => e)));
  assert.ok(isHookboxError(failures[0], "COMPILE_FAILED"), String(failures[0]));
  // One build ran: the three calls share its one failure.
  assert.equal(failures[1], failures[0]);
  assert.equal(failures[2], failures[0]);
  await Deno.remove(cacheDir, { recursive: true });
});

Deno.test("function-style: a top level that allocates without end fails the build", async () => {
  await assert.rejects(
    compileJsHook(fixture("fn_top_level_memory.mjs"), { cacheDir: TEST_CACHE }),
    (err) => isHookboxError(err) && err.code === "COMPILE_FAILED",
  );
});

Deno.test("function-style: a top level that floods stdout while built still builds, bounded", async () => {
  const wasm = await wasmRunner("fn_top_level_flood.mjs");
  try {
    const result = await wasm.run(EVENTS[1]!);
    assert.deepEqual([result.exitCode, result.stdout], [
      0,
      '{"reason":"built despite the flood: Bash"}\n',
    ]);
  } finally {
    await wasm.close();
  }
});
