/**
 * Subprocess of kept_plugins_test.ts (run with `--expose-gc`): loads and
 * calls `count` distinct plugins of `funcs` functions each (about 290 bytes
 * a function), one hook each, the hooks kept alive as a host keeps the hooks
 * it serves, and prints as JSON the compiled modules still alive after
 * collections (`live`, of `compiled`), the resident memory after the first
 * `count / 3` and after all in MB (for reading; the allocator makes it move
 * by tens of MB on a loaded machine), and the runtime's stats.
 *
 *   deno run -A --v8-flags=--expose-gc _kept_plugins_probe.ts COUNT FUNCS [CAP]
 */
import { createWasmRuntime } from "../../packages/runtime-wasm/mod.ts";
import type { HookDefinition } from "../../packages/core/hook/types.ts";
import { request, wasmHook } from "./_corpus.ts";
import { leb } from "../integration/_plugins.ts";

/** Magic and version of a WebAssembly binary. */
const WASM_HEADER = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];

/** A WASI command of `funcs` functions (each 40 adds on a local), the first marked with `id`. */
export function bigPlugin(funcs: number, id: number): Uint8Array {
  const section = (code: number, body: number[]) => [code, ...leb(body.length), ...body];
  const vector = (items: number[][]) => [...leb(items.length), ...items.flat()];
  const types = vector([[0x60, 1, 0x7f, 1, 0x7f], [0x60, 0, 0]]);
  const functions = vector([...Array(funcs).fill([0]), [1]]);
  const memory = vector([[0x00, 1]]);
  const name = (text: string) => [...leb(text.length), ...new TextEncoder().encode(text)];
  const exports = vector([[...name("memory"), 2, 0], [...name("_start"), 0, ...leb(funcs)]]);
  const adds: number[] = [];
  for (let k = 1; k <= 40; k++) adds.push(0x20, 0, 0x41, k, 0x6a, 0x21, 0);
  const body = (mark: number[]) => {
    const code = [1, 1, 0x7f, ...mark, ...adds, 0x20, 0, 0x0b];
    return [...leb(code.length), ...code];
  };
  const bodies: number[][] = [];
  // The first function drops `id` (signed LEB): plugins differ in one constant.
  bodies.push(body([0x41, ...sleb(id), 0x1a]));
  for (let i = 1; i < funcs; i++) bodies.push(body([]));
  const start = [0x41, 1, 0x10, 0, 0x1a, 0x0b];
  bodies.push([...leb(start.length + 1), 0, ...start]);
  const bytes = [
    ...WASM_HEADER,
    ...section(1, types),
    ...section(3, functions),
    ...section(5, memory),
    ...section(7, exports),
    ...section(10, vector(bodies)),
  ];
  return new Uint8Array(bytes);
}

/** Signed LEB128 of a small non-negative `value`. */
function sleb(value: number): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = value & 0x7f;
    value >>= 7;
    if (value === 0 && (byte & 0x40) === 0) return [...out, byte];
    out.push(byte | 0x80);
  }
}

if (import.meta.main) {
  const [count, funcs, cap] = Deno.args.map(Number);
  // Every module the runtime compiles (plugins and its helpers), held weakly here.
  const modules: WeakRef<WebAssembly.Module>[] = [];
  const runtime = createWasmRuntime({
    loadBytes: (hook) => Promise.resolve(bigPlugin(funcs!, Number(hook.name.slice(4)))),
    compile: async (bytes) => {
      const module = await WebAssembly.compile(bytes as Uint8Array<ArrayBuffer>);
      modules.push(new WeakRef(module));
      return module;
    },
    ...(cap === undefined || Number.isNaN(cap) ? {} : { keptPluginBytes: cap }),
  });
  const gc = (globalThis as { gc?: () => void }).gc!;
  const hooks: HookDefinition[] = [];
  // V8 frees compiled code and memories of collected plugins in tasks of its own after a
  // collection: several collections with turns of the event loop between them, the least
  // resident memory seen (on a loaded machine one collection left tens of MB not yet given back).
  const rss = async () => {
    let least = Infinity;
    for (let round = 0; round < 5; round++) {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 20));
      least = Math.min(least, Deno.memoryUsage().rss);
    }
    return Math.round(least / 1e6);
  };
  let early = 0;
  for (let i = 0; i < count!; i++) {
    const hook = wasmHook(`big-${i}`);
    hooks.push(hook);
    const result = await runtime.run(request(hook, undefined, { moduleKb: 8192 }));
    if (result.failure || result.exitCode !== 0) throw new Error(JSON.stringify(result));
    if (i === Math.floor(count! / 3) - 1) early = await rss();
  }
  const late = await rss();
  const live = modules.filter((ref) => ref.deref() !== undefined).length;
  console.log(JSON.stringify({
    live,
    compiled: modules.length,
    early,
    late,
    stats: runtime.stats!(),
    hooks: hooks.length,
  }));
}
