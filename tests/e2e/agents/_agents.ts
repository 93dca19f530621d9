/**
 * The real agent CLIs, pinned, installed from npm into `.cache/agents` by the
 * tests themselves (once; a lock keeps parallel test processes from racing),
 * and a project folder with hookbox installed for one of them.
 *
 * @module
 */
import { ROOT, tempDir } from "../../_helpers.ts";
import { npmInstall } from "../../_npm_tool.ts";

/** The agent packages and versions the suite drives (research/real-agents.md). */
export const AGENT_PACKAGES = {
  claude: "@anthropic-ai/claude-code@2.1.197",
  gemini: "@google/gemini-cli@0.61.0",
  codex: "@openai/codex@0.171.0",
  copilot: "@github/copilot@1.0.102",
} as const;

const PREFIX = `${ROOT}/.cache/agents`;

/** The path of an installed agent's executable, installing the pinned set first if needed. */
export async function agentBin(name: keyof typeof AGENT_PACKAGES): Promise<string> {
  await installed();
  return `${PREFIX}/node_modules/.bin/${name}`;
}

let installing: Promise<void> | null = null;

function installed(): Promise<void> {
  return installing ??= install();
}

async function install(): Promise<void> {
  if (await upToDate()) return;
  await Deno.mkdir(PREFIX, { recursive: true });
  // One installer at a time across processes: the lock file is created exclusively.
  const lock = `${PREFIX}/.installing`;
  for (;;) {
    try {
      await Deno.writeTextFile(lock, String(Deno.pid), { createNew: true });
      break;
    } catch (err) {
      if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
      const info = await Deno.stat(lock).catch(() => null);
      // A lock older than ten minutes belongs to a process that died.
      if (info?.mtime && Date.now() - info.mtime.getTime() > 600_000) {
        await Deno.remove(lock).catch(() => {});
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  try {
    if (await upToDate()) return;
    await npmInstall(PREFIX, Object.values(AGENT_PACKAGES));
  } finally {
    await Deno.remove(lock).catch(() => {});
  }
}

async function upToDate(): Promise<boolean> {
  for (const spec of Object.values(AGENT_PACKAGES)) {
    const at = spec.lastIndexOf("@");
    const [name, version] = [spec.slice(0, at), spec.slice(at + 1)];
    try {
      const pkg = JSON.parse(
        await Deno.readTextFile(`${PREFIX}/node_modules/${name}/package.json`),
      );
      if (pkg.version !== version) return false;
    } catch {
      return false;
    }
  }
  return true;
}

/** The Deno cache this process uses (so hook commands run by an agent with a private HOME find it). */
export async function denoDir(): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), { args: ["info", "--json"], stdout: "piped" })
    .output();
  return JSON.parse(new TextDecoder().decode(out.stdout)).denoDir;
}

/** The hookbox command line an agent runs: the CLI from source, with this repository's config. */
export function hookboxCommand(): string {
  return `${Deno.execPath()} run -A --config ${ROOT}/deno.json ${ROOT}/packages/cli/main.ts`;
}

/** Runs `hookbox ARGS` from source; throws on a non-zero exit. */
export async function hookbox(args: string[], cwd: string): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--config", `${ROOT}/deno.json`, `${ROOT}/packages/cli/main.ts`, ...args],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`hookbox ${args.join(" ")}: ${stderr}`);
  return stderr;
}

/** A JS project hook that rewrites `rewrite-me` in a shell command to `rewritten`. */
export async function writeRewriter(project: string): Promise<void> {
  const dir = `${project}/.agents/hooks/rewriter`;
  await Deno.mkdir(`${dir}/scripts`, { recursive: true });
  await Deno.writeTextFile(
    `${dir}/HOOK.md`,
    "---\nname: rewriter\ndescription: rewrites rewrite-me\ntrigger: pre-tool-call\npriority: 10\n---\n",
  );
  await Deno.writeTextFile(
    `${dir}/scripts/run.mjs`,
    [
      "export default (event) => {",
      "  const command = event.tool_input && event.tool_input.command;",
      '  if (typeof command !== "string" || !command.includes("rewrite-me")) return;',
      '  return { modified_input: { command: command.replace("rewrite-me", "rewritten") } };',
      "};",
      "",
    ].join("\n"),
  );
}

/**
 * A project folder with hookbox installed for `agent` (`hookbox install
 * --agent AGENT --project DIR` and `installArgs`), the rewriting project
 * hook, a private HOME (`.home`) and a daemon folder of its own (`.run`,
 * mode 700), all gone when the folder is removed.
 */
export async function agentProject(
  agent: string,
  prefix: string,
  installArgs: string[],
): Promise<string> {
  const dir = await tempDir(prefix);
  await Deno.mkdir(`${dir}/.home`);
  await Deno.mkdir(`${dir}/.run`, { mode: 0o700 });
  await writeRewriter(dir);
  await hookbox(["install", "--agent", agent, "--project", dir, ...installArgs], dir);
  return dir;
}
