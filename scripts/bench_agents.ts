/**
 * A hook call inside the real agents (issue 35): Claude Code, Gemini CLI,
 * Codex CLI and Copilot CLI (the pinned versions of `tests/e2e/agents`),
 * headless against the scripted model server, each run one turn with one
 * shell call. Each agent runs with hookbox installed in its project
 * (`hookbox install`, the bundled CLI `dist/cli/hookbox`, the built-in hooks
 * and a JS project hook, cached), with the same through the user's daemon
 * (`HOOKBOX_DAEMON=1`), with every one of those hook commands replaced by
 * `node -e 0`, with every one replaced by `/bin/true` (the agent's own cost
 * of running a hook command: the floor of any command form), and with no
 * hooks at all, in interleaved rounds. A hook
 * call's cost is (median run − median run without hooks) ÷ the hook calls
 * of a run (counted once, with a command that counts); ratios are to
 * `node -e 0`. `--loaded` keeps two CPU-bound processes running meanwhile.
 *
 *   deno run -A scripts/bench_agents.ts [--rounds 5] [--loaded] [--agent claude-code]...
 *
 * @module
 */
import { parseArgs } from "node:util";
import { agentBin, agentProject, denoDir } from "../tests/e2e/agents/_agents.ts";
import { type Driver, DRIVERS } from "../tests/e2e/agents/_drivers.ts";
import { modelServer } from "../tests/e2e/agents/_model.ts";
import { median } from "./_stats.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rounds: { type: "string", default: "5" },
    loaded: { type: "boolean", default: false },
    agent: { type: "string", multiple: true },
  },
});
const ROUNDS = Number(values.rounds);
const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const CLI = `${ROOT}/dist/cli/hookbox`;
const DENO_DIR = await denoDir();
const drivers = DRIVERS.filter((d) => !values.agent?.length || values.agent.includes(d.agent));

const build = await new Deno.Command(Deno.execPath(), {
  args: ["run", "-A", `${ROOT}/scripts/build_cli.ts`],
  stdout: "null",
}).output();
if (!build.success) throw new Error("scripts/build_cli.ts failed");

/** `value` with every string that runs the hookbox CLI replaced by `command`. */
function replaced(value: unknown, command: string): unknown {
  if (typeof value === "string") return value.startsWith(CLI) ? command : value;
  if (Array.isArray(value)) return value.map((v) => replaced(v, command));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replaced(v, command)]));
  }
  return value;
}

type Form = "none" | "/bin/true" | "node -e 0" | "hookbox" | "hookbox --daemon";
const FORMS: Form[] = ["none", "/bin/true", "node -e 0", "hookbox", "hookbox --daemon"];

async function bench(driver: Driver) {
  // The plain command form; the daemon's form is the same with HOOKBOX_DAEMON=1.
  const dir = await agentProject(driver.agent, `hookbox-bench-${driver.agent}-`, [
    "--command",
    CLI,
    "--hooks-dir",
    `${ROOT}/hooks`,
    "--no-daemon",
  ]);
  const home = `${dir}/.home`;
  const runtime = `${dir}/.run`;
  const config = `${dir}/${driver.config}`;
  const installed = JSON.parse(await Deno.readTextFile(config));
  const counter = `${dir}/calls`;
  const configs: Record<Form | "count", string | null> = {
    none: null,
    "/bin/true": JSON.stringify(replaced(installed, "/bin/true")),
    "node -e 0": JSON.stringify(replaced(installed, "node -e 0")),
    hookbox: JSON.stringify(installed),
    "hookbox --daemon": JSON.stringify(installed),
    count: JSON.stringify(
      replaced(installed, `node -e "require('fs').appendFileSync('${counter}', 'x')"`),
    ),
  };
  await using model = modelServer((results) =>
    results === 0 ? driver.shell("ls") : { text: "Finished." }
  );
  await driver.setup(home, model.url, dir);
  const run = async (form: Form | "count") => {
    const text = configs[form];
    if (text === null) await Deno.remove(config).catch(() => {});
    else await Deno.writeTextFile(config, text);
    const t0 = performance.now();
    const out = await new Deno.Command(await agentBin(driver.bin), {
      args: driver.args("list the files"),
      cwd: dir,
      clearEnv: true,
      env: {
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        HOME: home,
        DENO_DIR,
        HOOKBOX_CACHE_DIR: `${ROOT}/.cache/bench-agents`,
        XDG_RUNTIME_DIR: runtime,
        ...(form === "hookbox --daemon" ? { HOOKBOX_DAEMON: "1" } : {}),
        ...driver.env(model.url),
      },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const ms = performance.now() - t0;
    if (!out.success) {
      throw new Error(
        `${driver.agent} (${form}) exited ${out.code}: ${
          new TextDecoder().decode(out.stderr).slice(-2000)
        }`,
      );
    }
    return ms;
  };
  // Caches filled (compiled hooks, the daemon started), then the hook calls of one run counted.
  for (const form of FORMS) await run(form);
  await run("count");
  const calls = (await Deno.readTextFile(counter)).length;
  const times: Record<Form, number[]> = {
    none: [],
    "/bin/true": [],
    "node -e 0": [],
    hookbox: [],
    "hookbox --daemon": [],
  };
  for (let i = 0; i < ROUNDS; i++) {
    for (let j = 0; j < FORMS.length; j++) {
      const form = FORMS[(i + j) % FORMS.length]!;
      times[form].push(await run(form));
    }
  }
  await new Deno.Command(CLI, { args: ["daemon", "stop"], env: { XDG_RUNTIME_DIR: runtime } })
    .output();
  await Deno.remove(dir, { recursive: true });
  return { calls, medians: Object.fromEntries(FORMS.map((f) => [f, median(times[f])])) };
}

const burners = values.loaded
  ? [0, 1].map(() =>
    new Deno.Command("node", { args: ["-e", "for(;;){}"], stdout: "null", stderr: "null" })
      .spawn()
  )
  : [];
const rows: string[] = [];
try {
  for (const driver of drivers) {
    const { calls, medians } = await bench(driver);
    const per = (form: Form) => (medians[form]! - medians.none!) / calls;
    const node = per("node -e 0");
    rows.push(
      `${driver.agent}: ${calls} hook calls a run; run without hooks ${
        medians.none!.toFixed(0)
      } ms; per call: /bin/true ${per("/bin/true").toFixed(1)} ms (${
        (per("/bin/true") / node).toFixed(2)
      }×), node -e 0 ${node.toFixed(1)} ms, hookbox ${per("hookbox").toFixed(1)} ms (${
        (per("hookbox") / node).toFixed(2)
      }×), hookbox --daemon ${per("hookbox --daemon").toFixed(1)} ms (${
        (per("hookbox --daemon") / node).toFixed(2)
      }×)`,
    );
    console.error(rows.at(-1));
  }
} finally {
  for (const b of burners) b.kill();
}
console.log(
  `${ROUNDS} interleaved rounds per agent, medians${values.loaded ? ", two busy cores" : ""}:`,
);
for (const row of rows) console.log(`  ${row}`);
Deno.exit(0);
