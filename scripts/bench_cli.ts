/**
 * The one-shot CLI as an agent runs it (issue 11): `hookbox dispatch --agent
 * claude-code` with the five built-in hooks, one process per event, wall time
 * and peak RSS (GNU time) — the bundled CLI (`scripts/build_cli.ts`, built
 * first), the CLI from source, and the bundled CLI's remote form against a
 * `hookbox serve` on loopback holding the same hooks, and the bundled CLI
 * through the user's daemon (`--daemon`) — next to `node` running an empty
 * script, in interleaved rounds (each starting with the next command, runs
 * 50 ms apart); medians and ratios; the bundled CLI also with a small JS
 * project hook beside the built-in ones (a project's own hooks are most often
 * JS, and JS hooks share one engine module). `--loaded` keeps two CPU-bound
 * processes running meanwhile (a busy two-core machine). Every command runs
 * with only PATH and HOME (and the daemon's and service's settings) in its
 * environment, as an agent's hook command does in `bench_agents.ts`.
 *
 *   deno run -A scripts/bench_cli.ts [--rounds 15] [--loaded]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { builtinHookUploads } from "./_builtin_hooks.ts";
import { call, startServe } from "./_serve_process.ts";
import { median } from "./_stats.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rounds: { type: "string", default: "15" },
    loaded: { type: "boolean", default: false },
  },
});
const ROUNDS = Number(values.rounds);
/** Pause before each measured run. */
const SETTLE_MS = 50;
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
// The same event in a project with a JS hook of its own.
const project = `${dir}/project`;
await Deno.mkdir(`${project}/.agents/hooks/mine/scripts`, { recursive: true });
await Deno.writeTextFile(
  `${project}/.agents/hooks/mine/HOOK.md`,
  "---\nname: mine\ndescription: a project's own hook\ntrigger: pre-tool-call\n---\n",
);
await Deno.writeTextFile(
  `${project}/.agents/hooks/mine/scripts/run.mjs`,
  'export default function (event) {\n  return event.tool_name === "Bash" ? {} : { inject: ["seen"] };\n}\n',
);
const projectEvent = JSON.stringify({ ...JSON.parse(event), cwd: project });

/**
 * What the measured commands run with: a clean environment, as the agents' bench gives its agents
 * (what a shell's environment holds changes what is measured: `NODE_EXTRA_CA_CERTS`, set on this
 * machine, makes `node` read its certificate file, ~45 ms of an empty script's start).
 */
const measuredEnv: Record<string, string> = {
  PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
  HOME: Deno.env.get("HOME") ?? dir,
};

async function measure(argv: string[], stdin: string): Promise<{ ms: number; mib: number }> {
  const t0 = performance.now();
  const child = new Deno.Command("/usr/bin/time", {
    args: ["-f", "%M", ...argv],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    cwd: dir,
    clearEnv: true,
    env: measuredEnv,
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

const agentArgs = ["dispatch", "--agent", "claude-code", "--hooks-dir", `${ROOT}/hooks`];
const build = await new Deno.Command(Deno.execPath(), {
  args: ["run", "-A", `${ROOT}/scripts/build_cli.ts`],
  stdout: "null",
}).output();
if (!build.success) throw new Error("scripts/build_cli.ts failed");
// The remote form: the same built-in hooks as platform hooks of a `hookbox serve` on loopback.
const ADMIN = "bench-cli-admin-key-0123456789";
const server = await startServe({ db: `sqlite:${dir}/hookbox.db`, adminKey: ADMIN });
for (const { name, files } of await builtinHookUploads()) {
  const up = await call(server.url, "PUT", `/v1/platform/hooks/${name}`, ADMIN, { files });
  if (up.status !== 201) throw new Error(`${name}: ${JSON.stringify(up.body)}`);
}
await call(server.url, "POST", "/v1/tenants", ADMIN, { id: "bench" });
const tenantKey = (await call(server.url, "POST", "/v1/tenants/bench/keys", ADMIN, {})).body.key;
measuredEnv.HOOKBOX_KEY = tenantKey;
// The daemon's socket in a private folder of this run's own.
const runtimeDir = `${dir}/run`;
await Deno.mkdir(runtimeDir, { mode: 0o700 });
measuredEnv.XDG_RUNTIME_DIR = runtimeDir;
const commands: Record<string, string[]> = {
  "bundled --daemon": [`${ROOT}/dist/cli/hookbox`, ...agentArgs, "--daemon"],
  "bundled --remote (hookbox serve)": [
    `${ROOT}/dist/cli/hookbox`,
    "dispatch",
    "--agent",
    "claude-code",
    "--remote",
    server.url,
  ],
  "bundled (dist/cli/hookbox)": [`${ROOT}/dist/cli/hookbox`, ...agentArgs],
  "bundled, a JS project hook too": [`${ROOT}/dist/cli/hookbox`, ...agentArgs],
  "from source (deno run packages/cli/main.ts)": [
    Deno.execPath(),
    "run",
    "-A",
    `${ROOT}/packages/cli/main.ts`,
    ...agentArgs,
  ],
  "node empty.js": ["node", `${dir}/empty.js`],
};
const stdinOf = (name: string) =>
  name === "node empty.js" ? "" : name === "bundled, a JS project hook too" ? projectEvent : event;
// Fills the caches.
for (const [name, argv] of Object.entries(commands)) await measure(argv, stdinOf(name));
// The first --daemon call started the daemon: wait until it answers.
for (let i = 0; i < 100; i++) {
  const status = await new Deno.Command(`${ROOT}/dist/cli/hookbox`, {
    args: ["daemon", "status"],
    clearEnv: true,
    env: measuredEnv,
    stdout: "null",
    stderr: "null",
  }).output();
  if (status.success) break;
  await new Promise((resolve) => setTimeout(resolve, 100));
}
// --loaded: two CPU-bound processes for the length of the measurement.
const burners = values.loaded
  ? [0, 1].map(() =>
    new Deno.Command("node", { args: ["-e", "for(;;){}"], stdout: "null", stderr: "null" })
      .spawn()
  )
  : [];
const runs: Record<string, { ms: number; mib: number }[]> = {};
// Each round starts with the next command, and runs are spaced out: the one after the
// remote form would otherwise always share the cores with the server finishing its request
// (audit commit, logging), and the one after the run from source with its exit.
const entries = Object.entries(commands);
for (let i = 0; i < ROUNDS; i++) {
  for (let j = 0; j < entries.length; j++) {
    const [name, argv] = entries[(i + j) % entries.length]!;
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    (runs[name] ??= []).push(await measure(argv, stdinOf(name)));
  }
}
const medians = Object.fromEntries(
  Object.entries(runs).map(([name, rs]) => [name, {
    ms: median(rs.map((r) => r.ms)),
    mib: median(rs.map((r) => r.mib)),
  }]),
);
const node = medians["node empty.js"]!;
console.log(
  `${ROUNDS} interleaved rounds, medians; hookbox dispatch --agent claude-code, 5 built-in hooks, cached${
    values.loaded ? "; two CPU-bound processes running" : ""
  }`,
);
for (const [name, m] of Object.entries(medians)) {
  console.log(
    `${name.padEnd(36)} ${m.ms.toFixed(0).padStart(4)} ms  ${m.mib.toFixed(0).padStart(4)} MiB  ` +
      `${(m.ms / node.ms).toFixed(2)}× / ${(m.mib / node.mib).toFixed(2)}× node`,
  );
}
for (const burner of burners) burner.kill("SIGKILL");
console.log("targets: ≤ 100 ms and ≤ 100 MiB, no slower than node; with the daemon ≤ 0.3× node");
await new Deno.Command(`${ROOT}/dist/cli/hookbox`, {
  args: ["daemon", "stop"],
  clearEnv: true,
  env: measuredEnv,
  stdout: "null",
}).output();
await server.stop();
await Deno.remove(dir, { recursive: true });
