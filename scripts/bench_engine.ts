/**
 * Engine A/B (issue 12): the bench_peers guard, compiled by two builds of the
 * JS engine, side by side in one process against quickjs-emscripten. Build
 * the hooks with each checkout, then compare the two folders:
 *
 *   deno run -A scripts/bench_engine.ts build /tmp/engine-a     # on the old commit
 *   deno run -A scripts/bench_engine.ts build /tmp/engine-b     # on the new one
 *   deno run -A scripts/bench_engine.ts compare /tmp/engine-a /tmp/engine-b [--rounds 5] [--calls 300]
 *
 * `build` writes `script.wasm` and `function.wasm` (the compiled hooks, as a
 * platform would install them) into the folder. `compare` runs each of them
 * warm and fresh as `plugin.wasm` hooks through `executor.dispatch`, in
 * interleaved rounds with quickjs-emscripten's reused context and fresh
 * runtime, and prints p50, the ratio to the peer, B against A, and the fuel of
 * one call (exact: instructions counted by the meter).
 *
 * @module
 */
import { parseArgs } from "node:util";
import { getQuickJS } from "quickjs-emscripten";
import { denoFs } from "../packages/host-deno/fs.ts";
import { compileHook } from "../packages/compile/mod.ts";
import { loadHook } from "../packages/core/hook/discover.ts";
import { createExecutor, type Executor } from "../packages/hookbox/deno.ts";
import { EVENT_TEXT, FUNCTION_HOOK, quickjsPeers, SCRIPT } from "./_peer_guard.ts";
import { median } from "./_stats.ts";

const { values, positionals } = parseArgs({
  args: Deno.args,
  allowPositionals: true,
  options: { rounds: { type: "string", default: "5" }, calls: { type: "string", default: "300" } },
});
const [command, ...dirs] = positionals;
const HOOKS = { script: SCRIPT, function: FUNCTION_HOOK } as const;
const hookMd = (name: string, isolation: string) =>
  `---\nname: ${name}\ndescription: bench\ntrigger: pre-tool-call\nisolation: ${isolation}\n---\n`;

if (command === "build" && dirs.length === 1) await build(dirs[0]!);
else if (command === "compare" && dirs.length === 2) await compare(dirs[0]!, dirs[1]!);
else {
  console.error("usage: bench_engine.ts build DIR | compare DIR_A DIR_B [--rounds N] [--calls N]");
  Deno.exit(2);
}

async function build(out: string): Promise<void> {
  await Deno.mkdir(out, { recursive: true });
  for (const [name, source] of Object.entries(HOOKS)) {
    const tmp = await Deno.makeTempDir({ prefix: "hookbox-bench-engine-" });
    const dir = `${tmp}/${name}`;
    await Deno.mkdir(`${dir}/scripts`, { recursive: true });
    await Deno.writeTextFile(`${dir}/HOOK.md`, hookMd(name, "warm"));
    await Deno.writeTextFile(`${dir}/scripts/run.js`, source);
    const compiled = await compileHook(await loadHook(denoFs, dir, "project"));
    await Deno.writeFile(`${out}/${name}.wasm`, compiled.bytes);
    await Deno.remove(tmp, { recursive: true });
    console.log(`${out}/${name}.wasm: ${compiled.bytes.length} bytes`);
  }
}

async function compare(a: string, b: string): Promise<void> {
  const event = JSON.parse(EVENT_TEXT);
  const root = await Deno.makeTempDir({ prefix: "hookbox-bench-engine-" });
  const executor = async (name: string, isolation: string, wasm: string): Promise<Executor> => {
    const folder = `${root}/${name}/${name}`;
    await Deno.mkdir(folder, { recursive: true });
    await Deno.writeTextFile(`${folder}/HOOK.md`, hookMd(name, isolation));
    await Deno.copyFile(wasm, `${folder}/plugin.wasm`);
    return createExecutor({ projectDir: `${root}/${name}`, userDir: null });
  };
  const peers: Record<string, () => unknown> = {};
  const fuel: Record<string, number> = {};
  for (const [label, dir] of [["A", a], ["B", b]] as const) {
    for (const hook of Object.keys(HOOKS)) {
      for (const isolation of ["warm", "fresh"]) {
        const name = `${label} ${hook} ${isolation}`;
        const ex = await executor(
          `${label.toLowerCase()}-${hook}-${isolation}`,
          isolation,
          `${dir}/${hook}.wasm`,
        );
        const answer = await ex.dispatch(event);
        const run = answer.hooks[0];
        if (answer.decision !== "allow" || run?.outcome !== "ok") {
          throw new Error(`${name} did not allow: ${JSON.stringify(answer)}`);
        }
        fuel[name] = run.fuel;
        peers[name] = () => ex.dispatch(event);
      }
    }
  }
  const qjs = quickjsPeers(await getQuickJS());
  peers["quickjs-emscripten reused"] = qjs.reused;
  peers["quickjs-emscripten fresh"] = qjs.fresh;
  // 1,000 calls each before measuring, so that V8 has optimised every peer's
  // hot code (with 30, medians moved ±30% between runs of the same builds).
  for (const peer of Object.values(peers)) for (let i = 0; i < 1000; i++) await peer();

  const rounds = Number(values.rounds), calls = Number(values.calls);
  const samples: Record<string, number[]> = {};
  for (let round = 0; round < rounds; round++) {
    for (const [name, peer] of Object.entries(peers)) {
      const into = samples[name] ??= [];
      for (let i = 0; i < calls; i++) {
        const t0 = performance.now();
        await peer();
        into.push((performance.now() - t0) * 1000);
      }
    }
  }
  const p50 = (name: string) => median(samples[name]!);
  const reused = p50("quickjs-emscripten reused"), fresh = p50("quickjs-emscripten fresh");
  console.log(`A = ${a}, B = ${b}; ${rounds} interleaved rounds × ${calls} calls, p50`);
  for (const name of Object.keys(peers)) {
    const peer = name.includes("fresh") ? fresh : reused;
    const other = name.startsWith("B ") ? `A ${name.slice(2)}` : null;
    console.log(
      `${name.padEnd(28)} ${p50(name).toFixed(1).padStart(7)} µs  ${
        (p50(name) / peer).toFixed(2)
      }× quickjs-emscripten ${name.includes("fresh") ? "fresh" : "reused"}` +
        (other === null ? "" : `  ${(p50(name) / p50(other)).toFixed(2)}× A`) +
        (name in fuel ? `  fuel ${fuel[name]}` : ""),
    );
  }
  await Deno.remove(root, { recursive: true });
}
