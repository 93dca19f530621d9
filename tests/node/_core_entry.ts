/**
 * Runs on plain Node (bundled by node_core_test.ts): the Web-API core's wasm
 * runtime on plugins read from the folder given as argv[2]; prints one JSON
 * line per call.
 */
import { readFile } from "node:fs/promises";
import process from "node:process";
import type { HookDefinition } from "../../src/hook/types.ts";
import { createWasmRuntime } from "../../src/runtime/wasm/mod.ts";
import { manifestSchema } from "../../src/schema/manifest.ts";

const dir = process.argv[2];
const hook = (name: string, extra: Record<string, unknown> = {}): HookDefinition => ({
  name,
  level: "project",
  dir: `/node/${name}`,
  manifest: manifestSchema.parse({ name, description: "d", trigger: "pre-tool-call", ...extra }),
  body: "",
  entry: { runtime: "wasm", format: "wasm", path: `${dir}/${name.replaceAll("-", "_")}.wasm` },
});
const runtime = createWasmRuntime({
  loadBytes: async (h) =>
    new Uint8Array(await readFile(h.entry.runtime === "wasm" ? h.entry.path : "")),
});
const limits = {
  memoryMb: 16,
  fuel: 50_000_000,
  outputKb: 64,
  inputKb: 64,
  moduleKb: 1024,
  timeoutMs: 30_000,
};
const event = (command: string) =>
  new TextEncoder().encode(JSON.stringify({
    event_type: "pre-tool-call",
    session_id: "s1",
    tool_name: "Bash",
    tool_input: { command },
  }));
const calls: [HookDefinition, string][] = [
  [hook("guard-wasi"), "rm -rf /"],
  [hook("guard-wasi"), "ls"],
  [hook("loop-forever"), "ls"],
  ...Array.from({ length: 4 }, (_, i): [HookDefinition, string] => [
    hook("warm-reset-probe", { isolation: "warm" }),
    `echo ${"x".repeat(200 * i)}`,
  ]),
];
for (const [h, command] of calls) {
  const r = await runtime.run({ hook: h, input: event(command), env: {}, limits, tenantId: "t" });
  console.log(
    JSON.stringify({
      name: h.name,
      exitCode: r.exitCode,
      stdout: r.stdout,
      stderr: r.stderr,
      code: r.failure?.code ?? null,
    }),
  );
}
await runtime.close?.();
