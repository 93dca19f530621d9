/**
 * hookbox against the peers a platform would compare it with (issue 12), in
 * one process, interleaved rounds, medians and ratios. The same guard — parse
 * a 943-byte pre-tool-call event, one regex on `tool_input.command`, block or
 * allow — as:
 *
 *   - a hookbox JS hook (QuickJS compiled to WebAssembly), `isolation: warm`
 *     and `fresh`, through `executor.dispatch`, as a Node-style script and as
 *     a function-style hook (`export default function (event)`);
 *   - a hookbox AssemblyScript hook (warm; AssemblyScript has no regex: a
 *     substring search) and the WASI command `tests/corpus/guard_wasi.wat`
 *     (a byte search), through `executor.dispatch`;
 *   - `dispatch` with no hooks at all;
 *   - quickjs-emscripten (npm, benchmark-only): one reused context calling
 *     the guard as a function, and a new runtime + context per call, each
 *     with a memory limit and an interrupt handler;
 *   - a `node` subprocess per call.
 *
 * Plus memory per warm instance (one per tenant): what hookbox's warm pool
 * holds for the JS hook, and a quickjs-emscripten runtime's allocations.
 *
 *   deno run -A scripts/bench_peers.ts [--rounds 7] [--calls 300]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { getQuickJS } from "quickjs-emscripten";
import wabtInit from "wabt";
import { createExecutor, type Executor } from "../packages/hookbox/deno.ts";
import { compileHook } from "../packages/compile/mod.ts";
import { createWasmRuntime } from "../packages/runtime-wasm/mod.ts";
import { tuneWasmTiering } from "../packages/deno/wasm_tiering.ts";
import { EVENT_TEXT, FUNCTION_HOOK, quickjsPeers, SCRIPT } from "./_peer_guard.ts";
import { median } from "./_stats.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { rounds: { type: "string", default: "7" }, calls: { type: "string", default: "300" } },
});
const ROUNDS = Number(values.rounds);
const CALLS = Number(values.calls);
const ROOT = new URL("..", import.meta.url).pathname;

const EVENT = JSON.parse(EVENT_TEXT);

const AS_SOURCE = `import { ALLOW, block, input, json } from "hookbox";
export function hook(): i32 {
  const command = json.getString(input.text(), ["tool_input", "command"]);
  return command !== null && command.includes("rm -rf /") ? block("rm -rf / is not allowed") : ALLOW;
}
`;

const dir = await Deno.makeTempDir({ prefix: "hookbox-bench-peers-" });
async function hookFolder(
  name: string,
  frontmatter: string,
  files: Record<string, string | Uint8Array>,
) {
  const folder = `${dir}/${name}/${name}`;
  await Deno.mkdir(`${folder}/scripts`, { recursive: true });
  await Deno.writeTextFile(
    `${folder}/HOOK.md`,
    `---\nname: ${name}\ndescription: bench\ntrigger: pre-tool-call\n${frontmatter}---\n`,
  );
  for (const [path, data] of Object.entries(files)) {
    if (typeof data === "string") await Deno.writeTextFile(`${folder}/${path}`, data);
    else await Deno.writeFile(`${folder}/${path}`, data);
  }
  return createExecutor({
    projectDir: `${dir}/${name}`,
    userDir: null,
    ...(name === "js-warm" ? { runtimes: { wasm: jsWarmRuntime } } : {}),
  });
}
// The executors lower V8's tier-up budget before their first instance; this
// peer's own runtime (below) must not make instances before that either.
await tuneWasmTiering();
/** The JS warm hook's runtime, kept to read what its warm instances hold. */
const jsWarmRuntime = createWasmRuntime({
  loadBytes: async (hook) => (await compileHook(hook)).bytes,
  warmBytes: 1 << 30,
});
const wabt = await wabtInit();
const guardWat = wabt.parseWat(
  "g.wat",
  await Deno.readTextFile(`${ROOT}tests/corpus/guard_wasi.wat`),
  {},
);
const guardWasm = guardWat.toBinary({}).buffer;

const executors: Record<string, Executor> = {
  "hookbox JS warm": await hookFolder("js-warm", "isolation: warm\n", { "scripts/run.js": SCRIPT }),
  "hookbox JS fresh": await hookFolder("js-fresh", "isolation: fresh\n", {
    "scripts/run.js": SCRIPT,
  }),
  "hookbox JS function warm": await hookFolder("fn-warm", "isolation: warm\n", {
    "scripts/run.js": FUNCTION_HOOK,
  }),
  "hookbox JS function fresh": await hookFolder("fn-fresh", "isolation: fresh\n", {
    "scripts/run.js": FUNCTION_HOOK,
  }),
  "hookbox AssemblyScript warm": await hookFolder("as-warm", "isolation: warm\n", {
    "scripts/run.as.ts": AS_SOURCE,
  }),
  "hookbox WASI guard warm": await hookFolder("wasi-warm", "isolation: warm\n", {
    "plugin.wasm": guardWasm,
  }),
  "hookbox dispatch, no hooks": createExecutor({ projectDir: `${dir}/none`, userDir: null }),
};

const qjs = quickjsPeers(await getQuickJS());

await Deno.writeTextFile(`${dir}/guard.cjs`, SCRIPT);
type Peer = () => Promise<unknown> | unknown;
const peers: Record<string, Peer> = {
  ...Object.fromEntries(
    Object.entries(executors).map(([name, ex]) => [name, () => ex.dispatch(EVENT)]),
  ),
  "quickjs-emscripten reused context": qjs.reused,
  "quickjs-emscripten fresh runtime": qjs.fresh,
  "node subprocess": async () => {
    const child = new Deno.Command("node", {
      args: [`${dir}/guard.cjs`],
      // As an agent runs a hook command: PATH and HOME only (a shell's NODE_EXTRA_CA_CERTS makes
      // node read a certificate file at start).
      clearEnv: true,
      env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: Deno.env.get("HOME") ?? dir },
      stdin: "piped",
      stdout: "null",
      stderr: "null",
    }).spawn();
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(EVENT_TEXT));
    await w.close();
    return (await child.status).code;
  },
};

// Every peer answers allow on the event; check once, and warm up: 1,000 calls
// (30 for the subprocess), so that V8 has optimised the hot WebAssembly and JS
// of every peer before measuring — with 30, a peer's median depended on
// whether its tier-up had finished (±30% between runs of the same code).
for (const [name, peer] of Object.entries(peers)) {
  const answer = await peer();
  const allowed = typeof answer === "object" && answer !== null
    ? (answer as { decision: string }).decision === "allow"
    : answer === null || answer === 0;
  if (!allowed) throw new Error(`${name} did not allow: ${JSON.stringify(answer)}`);
  const warmUp = name === "node subprocess" ? 30 : 1000;
  for (let i = 0; i < warmUp; i++) await peer();
}

const samples: Record<string, number[]> = {};
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, peer] of Object.entries(peers)) {
    const calls = name === "node subprocess" ? Math.max(3, Math.floor(CALLS / 30)) : CALLS;
    for (let i = 0; i < calls; i++) {
      const t0 = performance.now();
      await peer();
      (samples[name] ??= []).push((performance.now() - t0) * 1000);
    }
  }
}
const p50 = Object.fromEntries(Object.entries(samples).map(([n, xs]) => [n, median(xs)]));
const qjsReused = p50["quickjs-emscripten reused context"]!;
const qjsFresh = p50["quickjs-emscripten fresh runtime"]!;
console.log(
  `${ROUNDS} interleaved rounds × ${CALLS} calls, p50 (µs); event ${EVENT_TEXT.length} bytes`,
);
for (const [name, us] of Object.entries(p50)) {
  console.log(
    `${name.padEnd(36)} ${us.toFixed(1).padStart(9)} µs  ` +
      `${(us / qjsReused).toFixed(2)}× qjs-reused  ${(us / qjsFresh).toFixed(2)}× qjs-fresh`,
  );
}

// Memory per warm instance, one per tenant: what hookbox's warm pool holds (linear memory plus
// the restore snapshot) and what quickjs-emscripten's runtimes have allocated (memory_used_size).
const TENANTS = 20;
const jsWarm = executors["hookbox JS warm"]!;
for (let i = 0; i < TENANTS; i++) await jsWarm.dispatch(EVENT, { tenantId: `mem-${i}` });
const stats = jsWarmRuntime.stats!();
// Every instance holds its linear memory; the plugin's pristine image is held once, shared.
const perInstance = stats.warmIdleBytes / (stats.warmInstances + 1) / (1 << 20);
const hookboxWarm = stats.warmIdleBytes / stats.warmInstances / (1 << 20);
let qjsBytes = 0;
for (let i = 0; i < TENANTS; i++) qjsBytes += qjs.usedBytes();
console.log(
  `memory per warm instance: hookbox JS ${perInstance.toFixed(2)} MiB of linear memory, plus one ` +
    `shared pristine image per plugin (${
      hookboxWarm.toFixed(2)
    } MiB per instance over ${stats.warmInstances}); ` +
    `quickjs-emscripten runtime+context ${(qjsBytes / TENANTS / (1 << 20)).toFixed(2)} MiB ` +
    "(memory_used_size; the shared emscripten module not counted) — target ≤ 1 MiB",
);
console.log(
  "targets: JS warm ≤ qjs reused, JS fresh ≤ qjs fresh, no hooks ≤ 5 µs, WASI guard ≤ 15 µs",
);
for (const ex of Object.values(executors)) await ex.close();
await Deno.remove(dir, { recursive: true });
