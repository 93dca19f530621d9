/**
 * Differential tests: every fixture hook runs as a `node` subprocess (deno for
 * TypeScript) and as compiled WebAssembly over the same events; exit code,
 * stdout and stderr must be identical.
 */
import assert from "node:assert/strict";
import { assertRunsLike, nativeRun, wasmRunner } from "./_js_runner.ts";

const base = {
  timestamp: "2025-01-01T00:00:00Z",
  session_id: "s-1",
  work_dir: "/work",
};

/** Events every fixture sees. */
const EVENTS = [
  { ...base, event_type: "pre-tool-call", tool_name: "Bash", tool_input: { command: "rm -rf /" } },
  { ...base, event_type: "pre-tool-call", tool_name: "Bash", tool_input: { command: "ls -la" } },
  {
    ...base,
    event_type: "pre-tool-call",
    tool_name: "Bash",
    tool_input: { command: "git push origin main" },
  },
  {
    ...base,
    event_type: "pre-tool-call",
    tool_name: "Bash",
    tool_input: { command: "sudo shutdown now" },
  },
  {
    ...base,
    event_type: "pre-tool-call",
    tool_name: "Write",
    tool_input: { file_path: "/etc/hosts", content: "x" },
  },
  {
    ...base,
    event_type: "pre-tool-call",
    tool_name: "Read",
    tool_input: { file_path: "/work/ä.txt" },
  },
  {
    ...base,
    event_type: "pre-tool-call",
    tool_name: "WebFetch",
    tool_input: { url: "https://Docs.Example.com:443/a/./b/../c?q=x%20y&n=1#frag" },
  },
  { ...base, event_type: "pre-agent-turn", prompt: "héllo wörld ✓ 🎉 my password is hunter2" },
  { ...base, event_type: "pre-agent-turn", prompt: "" },
].map((e) => JSON.stringify(e));

/** Fixtures whose behaviour must match Node byte for byte. */
const FIXTURES = [
  "cjs_guard.js",
  "esm_guard.mjs",
  "ts_guard.ts",
  "top_level_await.mjs",
  "stdin_stream.js",
  "stdin_encoding.js",
  "stdin_readable.js",
  "exit_code.js",
  "block_exit2.js",
  "modified_input.mjs",
  "console_format.js",
  "web_apis.mjs",
  "deep_recursion.js",
  "modern_library.js",
  "regex_search.js",
  "json_strings.js",
  "events_timers.js",
  "esm_builtins.mjs",
  "atoms.js",
];

for (const name of FIXTURES) {
  Deno.test(`compileJsHook() output of ${name} behaves like the script run natively`, async () => {
    const wasm = await wasmRunner(name);
    try {
      await assertRunsLike(wasm, EVENTS, (event) => nativeRun(name, event), name);
    } finally {
      await wasm.close();
    }
  });
}

Deno.test("compiled hooks see only the granted environment, like a scrubbed node", async () => {
  const wasm = await wasmRunner("env_granted.js", {}, ["HOOK_MODE", "HOOK_LEVEL"]);
  try {
    const env = { HOOK_MODE: "strict", HOOK_LEVEL: "2" };
    const expected = await nativeRun("env_granted.js", "{}", env);
    const actual = await wasm.run("{}", { ...env, HOOK_SECRET: "not granted" });
    assert.deepEqual(
      { exitCode: actual.exitCode, stdout: actual.stdout, stderr: actual.stderr },
      expected,
    );
    const none = await wasm.run("{}");
    assert.equal(none.stdout, '{"keys":[],"mode":null}\n');
  } finally {
    await wasm.close();
  }
});

for (const name of ["uncaught.js", "uncaught_pending.js", "unhandled_rejection.mjs"]) {
  Deno.test(`compiled ${name} exits 1 with the error on stderr, like node`, async () => {
    const wasm = await wasmRunner(name);
    try {
      const event = EVENTS[1]!;
      const expected = await nativeRun(name, event);
      const actual = await wasm.run(event);
      assert.equal(expected.exitCode, 1);
      assert.equal(actual.exitCode, 1);
      assert.equal(actual.stdout, expected.stdout);
      const message = /Error: (cannot handle pre-tool-call|nobody catches this)/;
      assert.match(expected.stderr, message);
      assert.match(actual.stderr, message);
    } finally {
      await wasm.close();
    }
  });
}

for (const name of ["cjs_guard.js", "atoms.js"]) {
  Deno.test(`a warm compiled ${name} answers every call like a fresh one`, async () => {
    const wasm = await wasmRunner(name, {}, [], "warm");
    try {
      for (const event of [...EVENTS, ...EVENTS]) {
        const expected = await nativeRun(name, event);
        const actual = await wasm.run(event);
        assert.deepEqual(
          { exitCode: actual.exitCode, stdout: actual.stdout, stderr: actual.stderr },
          expected,
        );
      }
    } finally {
      await wasm.close();
    }
  });
}

Deno.test("the named exports the bundler offers for built-ins are exactly the engine's", async () => {
  const { ALLOWED_BUILTINS, BUILTIN_EXPORTS } = await import(
    "../../packages/compile/_js_builtins.ts"
  );
  const wasm = await wasmRunner("builtin_keys.js");
  try {
    const run = await wasm.run(JSON.stringify({ modules: ALLOWED_BUILTINS }));
    assert.equal(run.exitCode, 0, run.stderr);
    const keys = JSON.parse(run.stdout) as Record<string, string[]>;
    for (const [name, names] of Object.entries(BUILTIN_EXPORTS)) {
      assert.deepEqual([...names!].sort(), keys[name]!.filter((k) => k !== "default"), name);
    }
    // `process` keeps its methods on the prototype: it is served the CommonJS way.
    assert.equal(BUILTIN_EXPORTS.process, undefined);
  } finally {
    await wasm.close();
  }
});
