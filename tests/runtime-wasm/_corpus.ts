/**
 * Test helpers for the wasm runtime: compiles the hostile corpus
 * (`tests/corpus/*.wat`) with npm `wabt`, and builds hooks and requests.
 *
 * @module
 */
import wabtInit from "wabt";
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { fakeHook, ROOT } from "../_helpers.ts";
import type { HookDefinition } from "../../packages/core/hook/types.ts";
import type {
  EffectiveLimits,
  RunRequest,
  RunResult,
  Runtime,
} from "../../packages/core/runtime/types.ts";
import { createWasmRuntime, type WasmRuntimeOptions } from "../../packages/runtime-wasm/mod.ts";

const wabt = await wabtInit();
const compiled = new Map<string, Uint8Array>();
/** Proposals the corpus uses; wabt writes what it parses, valid or not. */
const FEATURES = { exceptions: true, threads: true, multi_memory: true } as const;

/** The binary of `tests/corpus/<name>.wat`. */
export async function corpus(name: string): Promise<Uint8Array> {
  const hit = compiled.get(name);
  if (hit !== undefined) return hit;
  const buffer = watBytes(name, await Deno.readTextFile(`${ROOT}/tests/corpus/${name}.wat`));
  compiled.set(name, buffer);
  return buffer;
}

/** The binary of WebAssembly text made by a test (for modules too big to keep as files). */
export function watBytes(name: string, source: string): Uint8Array {
  const module = wabt.parseWat(`${name}.wat`, source, FEATURES);
  const { buffer } = module.toBinary({});
  module.destroy();
  return buffer;
}

/** Generous defaults; tests lower the one they exercise. */
export const LIMITS: EffectiveLimits = {
  memoryMb: 16,
  fuel: 50_000_000,
  outputKb: 64,
  inputKb: 64,
  moduleKb: 1024,
  timeoutMs: 30_000,
};

/** A hook named `name` whose plugin is `bytes` (or the corpus file of the same name). */
export function wasmHook(name: string, frontmatter: Record<string, unknown> = {}): HookDefinition {
  return fakeHook({ name: name.replaceAll("_", "-"), ...frontmatter }, {
    entry: { runtime: "wasm", format: "wasm", path: `/fake/${name}.wasm` },
  });
}

/** A runtime that loads `tests/corpus/<name>.wat` for a hook whose entry is `<name>.wasm`. */
export function corpusRuntime(
  extra: Record<string, Uint8Array> = {},
  options: Partial<WasmRuntimeOptions> = {},
): Runtime {
  return createWasmRuntime({
    loadBytes: (hook) => {
      const name = hook.entry.runtime === "wasm"
        ? hook.entry.path.replace(/^.*\//, "").replace(/\.wasm$/, "")
        : "";
      return extra[name] !== undefined ? Promise.resolve(extra[name]) : corpus(name);
    },
    ...options,
  });
}

/** A request for `hook` with `event` (object or raw text) and limit overrides. */
export function request(
  hook: HookDefinition,
  event: unknown = { event_type: "pre-tool-call", tool_name: "Bash", tool_input: {} },
  limits: Partial<EffectiveLimits> = {},
  extra: Partial<RunRequest> = {},
): RunRequest {
  const text = typeof event === "string" ? event : JSON.stringify(event);
  return {
    hook,
    input: new TextEncoder().encode(text),
    env: {},
    limits: { ...LIMITS, ...limits },
    tenantId: "tenant-a",
    ...extra,
  };
}

/** A pre-tool-call event for a shell command. */
export function shellEvent(command: string): Record<string, unknown> {
  return {
    event_type: "pre-tool-call",
    session_id: "s1",
    tool_name: "Bash",
    tool_input: { command },
  };
}

/** The same runtime still runs both guards, fresh and warm, with the right answer. */
export async function assertServesNext(runtime: Runtime): Promise<void> {
  for (const isolation of ["fresh", "warm"]) {
    for (const abi of ["wasi", "extism"]) {
      const hook = wasmHook(`guard_${abi}`, { isolation });
      const result = await runtime.run(request(hook, shellEvent("rm -rf /")));
      assertEquals(withoutFuel(result), {
        exitCode: 2,
        stdout: "",
        stderr: "rm -rf is not allowed",
      });
    }
  }
}

/** A result without its `fuel` figure (which varies), for exact comparisons. */
export function withoutFuel(result: RunResult): RunResult {
  const { fuel: _fuel, ...rest } = result;
  return rest;
}
