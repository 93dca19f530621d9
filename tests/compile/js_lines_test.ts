/**
 * A JS/TS hook's stack trace names the author's file and line, not the
 * bundle's: `scripts/lib.ts:3`, not `hook.js:12`.
 */
import assert from "node:assert/strict";
import { compileJsHook } from "../../packages/compile/js.ts";
import { createWasmRuntime } from "../../packages/runtime-wasm/mod.ts";
import { authorLines, parseLineTable } from "../../packages/core/runtime/lines.ts";
import { lineTable, MAX_RUN_NUMBERS } from "../../packages/compile/_js_lines.ts";
import { fakeHook, tempDir } from "../_helpers.ts";
import { LIMITS, TEST_CACHE } from "./_js_runner.ts";

/** Writes `files` into a new hook folder; returns its path. */
async function hookFolder(files: Record<string, string>): Promise<string> {
  const dir = await tempDir("hookbox-lines-");
  for (const [path, text] of Object.entries(files)) {
    await Deno.mkdir(`${dir}/${path}`.replace(/\/[^/]*$/, ""), { recursive: true });
    await Deno.writeTextFile(`${dir}/${path}`, text);
  }
  return dir;
}

async function runOnce(entry: string, event: unknown) {
  const { bytes } = await compileJsHook(entry, { cacheDir: TEST_CACHE });
  const runtime = createWasmRuntime({ loadBytes: () => Promise.resolve(bytes) });
  try {
    return await runtime.run({
      hook: fakeHook({ name: "lines" }, { entry: { runtime: "wasm", format: "js", path: entry } }),
      input: new TextEncoder().encode(JSON.stringify(event)),
      env: {},
      limits: LIMITS,
      tenantId: "t",
    });
  } finally {
    await runtime.close?.();
  }
}

const EVENT = { event_type: "pre-tool-call", session_id: "s", tool_input: {} };

Deno.test("a TS hook's trace names each file and line of the author's, through an import", async () => {
  const dir = await hookFolder({
    "scripts/lib.ts": [
      "// a helper",
      "export function depth(input: { nested?: { x: number } }): number {",
      "  return input.nested!.x;",
      "}",
    ].join("\n"),
    "scripts/run.ts": [
      'import { depth } from "./lib.ts";',
      "",
      "interface Event { tool_input: { nested?: { x: number } } }",
      "",
      "export default function (event: Event) {",
      "  const d = depth(event.tool_input);",
      "  return { decision: d > 1 ? 'block' : 'allow' };",
      "}",
    ].join("\n"),
  });
  try {
    const result = await runOnce(`${dir}/scripts/run.ts`, EVENT);
    assert.equal(result.exitCode, 1, JSON.stringify(result));
    assert.match(result.stderr, /TypeError: cannot read property 'x' of undefined/);
    assert.match(result.stderr, /at depth \(scripts\/lib\.ts:3\)/);
    assert.match(result.stderr, /\(scripts\/run\.ts:6\)/);
    assert.doesNotMatch(result.stderr, /hook\.js/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a script-style hook's uncaught throw names its line", async () => {
  const dir = await hookFolder({
    "scripts/run.mjs": [
      'import { readFileSync } from "node:fs";',
      "const event = JSON.parse(readFileSync(0, 'utf8'));",
      "",
      "if (!event.tool_input.command) {",
      "  throw new Error('no command given');",
      "}",
    ].join("\n"),
  });
  try {
    const result = await runOnce(`${dir}/scripts/run.mjs`, EVENT);
    assert.notEqual(result.exitCode, 0, JSON.stringify(result));
    assert.match(result.stderr, /Error: no command given/);
    assert.match(result.stderr, /scripts\/run\.mjs:5/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a line table rewrites only the lines it knows, and a forged one is ignored", () => {
  const table = parseLineTable(
    JSON.stringify({ prefix: 2, sources: ["a.js"], runs: [0, 7, 1, -1, 0, 1] }),
  );
  assert.notEqual(table, null);
  assert.equal(
    authorLines("at f (hook.js:3)\nat g (hook.js:4:10)\nat h (hook.js:99)", table!),
    "at f (a.js:7)\nat g (hook.js:4:10)\nat h (hook.js:99)",
  );
  assert.equal(parseLineTable('{"prefix": "x"}'), null);
  assert.equal(parseLineTable(JSON.stringify({ prefix: 0, sources: [], runs: [1, 2] })), null);
  // Runs: three lines of b.js from its line 10, then a.js's line 4.
  const runs = parseLineTable(
    JSON.stringify({ prefix: 0, sources: ["a.js", "b.js"], runs: [1, 10, 3, 0, 4, 1] }),
  )!;
  assert.equal(
    authorLines("hook.js:1 hook.js:3 hook.js:4 hook.js:5", runs),
    "b.js:10 b.js:12 a.js:4 hook.js:5",
  );
  assert.equal(parseLineTable("not json"), null);
  assert.equal(parseLineTable(JSON.stringify({ prefix: 0, sources: [1], runs: [] })), null);
});

Deno.test("a bundle whose lines alternate between files keeps a bounded table", () => {
  // 200,000 lines, each from the other of two files: a run per line, past the cap.
  const lines = 200_000;
  const mappings = ["AAAA", ...Array.from({ length: lines - 1 }, (_, i) => i % 2 ? "ADAA" : "ACAA")]
    .join(";");
  const map = JSON.stringify({ version: 3, sources: ["a.js", "b.js"], names: [], mappings });
  const table = lineTable(map, lines, 1, "/hook/scripts", "/hook");
  assert.equal(table.runs.length, MAX_RUN_NUMBERS);
  assert.deepEqual(table.sources, ["scripts/a.js", "scripts/b.js"]);
  // The first lines still map; past the table they are left as the engine wrote them.
  assert.equal(authorLines("hook.js:3 hook.js:150000", table), "scripts/b.js:1 hook.js:150000");
});
