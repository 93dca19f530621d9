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
 * one call (exact: instructions counted by the meter). `build` also compiles
 * the checkout's built-in hooks (`hooks/`, as they are with that engine), and
 * `compare` prints the fuel each uses on the events of `BUILTIN_EVENTS`, from
 * a short one to text a hostile model or page could send, A against B.
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

/** Events for the built-in hooks' fuel: ordinary ones and the long texts their guards scan. */
const BUILTIN_EVENTS: { hook: string; label: string; event: Record<string, unknown> }[] = (() => {
  const stop = (label: string, message: string) => ({
    hook: "stop-gate",
    label,
    event: { event_type: "pre-agent-turn-stop", session_id: "s", last_message: message },
  });
  const output = (hook: string, label: string, tool: string, text: string) => ({
    hook,
    label,
    event: {
      event_type: "post-tool-call",
      session_id: "s",
      tool_name: tool,
      tool_input: { command: "cat log" },
      tool_output: text,
    },
  });
  const command = (label: string, text: string) => ({
    hook: "shell-guard",
    label,
    event: {
      event_type: "pre-tool-call",
      session_id: "s",
      tool_name: "Bash",
      tool_input: { command: text },
    },
  });
  const prose = "The parser reads each line, keeps the header and writes the rest to the log. ";
  const log = "2026-11-28 10:00:01 INFO worker-3 request id=42 path=/v1/items status=200 in 12ms\n";
  return [
    stop("a short message", "Done: the parser is implemented and the tests pass."),
    stop("60 KB of prose", prose.repeat(800)),
    stop("100 KB of resolved phrases", "Done. " + "no TODO FIXME XXX ".repeat(5_600)),
    output("secret-redactor", "a key in a short output", "Bash", "AKIAIOSFODNN7EXAMPLE ok"),
    output("secret-redactor", "100 KB of log lines", "Bash", log.repeat(1_200)),
    output("injection-marker", "a short page", "WebFetch", "Welcome to the docs."),
    output("injection-marker", "100 KB of prose", "WebFetch", prose.repeat(1_300)),
    command("git status", "git status"),
    command("a 4 KB command", `echo ${"abc ".repeat(1_000)}`),
  ];
})();

async function build(out: string): Promise<void> {
  await Deno.mkdir(out, { recursive: true });
  const hooks = new URL("../hooks/", import.meta.url).pathname;
  for (const name of new Set(BUILTIN_EVENTS.map((e) => e.hook))) {
    const compiled = await compileHook(await loadHook(denoFs, `${hooks}${name}`, "platform"));
    await Deno.mkdir(`${out}/builtin/${name}`, { recursive: true });
    await Deno.copyFile(`${hooks}${name}/HOOK.md`, `${out}/builtin/${name}/HOOK.md`);
    await Deno.writeFile(`${out}/builtin/${name}/plugin.wasm`, compiled.bytes);
  }
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
  await compareBuiltins(a, b);
}

/** Fuel of each built-in hook (A's and B's build) on each of its events, B against A. */
async function compareBuiltins(a: string, b: string): Promise<void> {
  console.log("\nbuilt-in hooks, fuel of one call (A's hooks and engine, B's)");
  for (const { hook, label, event } of BUILTIN_EVENTS) {
    const fuel: number[] = [];
    const shown: string[] = [];
    for (const dir of [a, b]) {
      const executor = createExecutor({
        platformDirs: [`${dir}/builtin/${hook}`],
        userDir: null,
        projectDir: null,
      });
      const run = (await executor.dispatch(event)).hooks[0];
      await executor.close();
      fuel.push(run?.fuel ?? NaN);
      // A hook that ran out of a limit shows which (its fuel is then the limit's).
      shown.push(run?.outcome === "limit" ? `out of ${run.detail?.split(":")[0]}` : `${run?.fuel}`);
    }
    const ratio = fuel[1]! / fuel[0]!;
    console.log(
      `${`${hook}, ${label}`.padEnd(48)} ${shown[0]!.padStart(14)} ${shown[1]!.padStart(14)}  ${
        ratio.toFixed(2)
      }× A`,
    );
  }
}

if (command === "build" && dirs.length === 1) await build(dirs[0]!);
else if (command === "compare" && dirs.length === 2) await compare(dirs[0]!, dirs[1]!);
else {
  console.error("usage: bench_engine.ts build DIR | compare DIR_A DIR_B [--rounds N] [--calls N]");
  Deno.exit(2);
}
