/**
 * Differential test of the built-in JS hooks: every case of the event tables
 * runs under `node` and compiled to WebAssembly (through the same runtime,
 * limits and isolation `dispatch` uses); exit code, stdout and stderr must be
 * identical.
 */
import assert from "node:assert/strict";
import { denoFs } from "../../packages/host-deno/fs.ts";
import { compileHook } from "../../packages/compile/mod.ts";
import { loadHook } from "../../packages/core/hook/discover.ts";
import { DEFAULT_POLICY, effectiveLimits } from "../../packages/core/policy.ts";
import { createWasmRuntime } from "../../packages/runtime-wasm/mod.ts";
import { HOOK_CASES, type HookCase, NOT_JSON, stdinOf } from "./_cases.ts";
import { runNode } from "./_run_node.ts";

const CACHE = new URL("../../.cache/test-plugins", import.meta.url).pathname;
const encoder = new TextEncoder();

async function inBatches<T, R>(
  items: T[],
  size: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) {
    out.push(...await Promise.all(items.slice(i, i + size).map(fn)));
  }
  return out;
}

const byHook = new Map<string, HookCase[]>();
for (const c of HOOK_CASES) byHook.set(c.hook, [...(byHook.get(c.hook) ?? []), c]);

for (const [name, cases] of byHook) {
  Deno.test(`${name}: node and compiled WebAssembly answer every case identically`, async () => {
    const hook = await loadHook(
      denoFs,
      new URL(`../../hooks/${name}`, import.meta.url).pathname,
      "platform",
    );
    assert.equal(hook.entry.runtime, "wasm");
    const { bytes } = await compileHook(hook, { cacheDir: CACHE });
    const runtime = createWasmRuntime({ loadBytes: () => Promise.resolve(bytes) });
    const limits = effectiveLimits(hook.manifest, DEFAULT_POLICY);
    try {
      const mismatches = (await inBatches(cases, 4, async (c) => {
        const stdin = stdinOf(c);
        const [node, wasm] = await Promise.all([
          runNode(name, stdin),
          runtime.run({ hook, input: encoder.encode(stdin), env: {}, limits, tenantId: "t" }),
        ]);
        // Stdin that is not JSON: the parsers' words differ, the rest must not (the
        // engine adds a stack line after the message).
        const notJson = c.stderrIncludes === NOT_JSON;
        const shown = (text: string) => notJson ? text.slice(0, NOT_JSON.length) : text;
        const got = {
          exitCode: wasm.exitCode,
          stdout: wasm.stdout,
          stderr: shown(wasm.stderr),
          failure: wasm.failure,
        };
        const want = {
          exitCode: node.exitCode,
          stdout: node.stdout,
          stderr: shown(node.stderr),
          failure: undefined,
        };
        try {
          assert.deepEqual(got, want);
          return null;
        } catch {
          return `${c.name}: node ${JSON.stringify(want)} wasm ${JSON.stringify(got)}`;
        }
      })).filter((m) => m !== null);
      assert.deepEqual(mismatches, []);
      assert.ok(cases.length >= 10, `only ${cases.length} cases`);
    } finally {
      await runtime.close?.();
    }
  });
}
