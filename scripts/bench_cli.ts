/**
 * The one-shot CLI as an agent runs it (issue 11): `hookbox dispatch --agent
 * claude-code` with the five built-in hooks, one process per event, wall time
 * and peak RSS (GNU time), next to `node` running an empty script, in
 * interleaved rounds; medians and ratios.
 *
 *   deno run -A scripts/bench_cli.ts [--rounds 15]
 *
 * @module
 */
import { parseArgs } from "node:util";

const { values } = parseArgs({
  args: Deno.args,
  options: { rounds: { type: "string", default: "15" } },
});
const ROUNDS = Number(values.rounds);
const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const dir = await Deno.makeTempDir({ prefix: "hookbox-bench-cli-" });
await Deno.writeTextFile(`${dir}/empty.js`, "");
const event = JSON.stringify({
  session_id: "s1",
  cwd: dir,
  hook_event_name: "PreToolUse",
  tool_name: "Bash",
  tool_input: { command: "git status" },
  tool_use_id: "t1",
});

async function measure(argv: string[], stdin: string): Promise<{ ms: number; mib: number }> {
  const t0 = performance.now();
  const child = new Deno.Command("/usr/bin/time", {
    args: ["-f", "%M", ...argv],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    cwd: dir,
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(stdin));
  await w.close();
  const out = await child.output();
  const ms = performance.now() - t0;
  const err = new TextDecoder().decode(out.stderr).trim().split("\n");
  if (out.code !== 0) throw new Error(`${argv.join(" ")}: ${err.join("\n")}`);
  return { ms, mib: Number(err.at(-1)) / 1024 };
}

const hookbox = [
  Deno.execPath(),
  "run",
  "-A",
  `${ROOT}/src/cli.ts`,
  "dispatch",
  "--agent",
  "claude-code",
  "--hooks-dir",
  `${ROOT}/hooks`,
];
const node = ["node", `${dir}/empty.js`];
await measure(hookbox, event); // fills the compile cache
const runs = {
  hookbox: [] as { ms: number; mib: number }[],
  node: [] as { ms: number; mib: number }[],
};
for (let i = 0; i < ROUNDS; i++) {
  runs.hookbox.push(await measure(hookbox, event));
  runs.node.push(await measure(node, ""));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const h = {
  ms: median(runs.hookbox.map((r) => r.ms)),
  mib: median(runs.hookbox.map((r) => r.mib)),
};
const n = { ms: median(runs.node.map((r) => r.ms)), mib: median(runs.node.map((r) => r.mib)) };
console.log(`${ROUNDS} interleaved rounds, medians`);
console.log(
  `hookbox dispatch --agent claude-code (5 built-in hooks, cached): ${h.ms.toFixed(0)} ms, ${
    h.mib.toFixed(0)
  } MiB peak`,
);
console.log(`node empty.js: ${n.ms.toFixed(0)} ms, ${n.mib.toFixed(0)} MiB peak`);
console.log(
  `ratio: ${(h.ms / n.ms).toFixed(2)}× wall, ${
    (h.mib / n.mib).toFixed(2)
  }× memory (targets ≤ 100 ms, ≤ 100 MiB)`,
);
await Deno.remove(dir, { recursive: true });
