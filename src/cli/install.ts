/**
 * `hookbox install|uninstall --agent NAME [--project DIR | --user] [--http URL]
 * [--command CMD]`: writes (or removes) hookbox's entries in the agent's own
 * hook config file, keeping everything else in it (SPEC §8).
 */
import { parseArgs } from "node:util";
import { absolute, readCappedFile } from "../adapters/deno/fs.ts";
import { isHookboxError } from "../errors.ts";
import { isInside } from "../host.ts";
import { AGENTS, isAgentName } from "../agents/adapters.ts";
import {
  CONFIG_FILES,
  ConfigTextError,
  editConfigText,
  hasComments,
  HTTP_AGENTS,
  type InstallableAgent,
  installInto,
  isEmptyConfig,
  parseConfigText,
  uninstallFrom,
} from "../agents/install.ts";
import { EXIT, UsageError } from "./_io.ts";
import { INSTALL_USAGE } from "./usage.ts";

/** `hookbox install`. */
export function installCommand(args: string[]): Promise<number> {
  return run(args, "install");
}

/** `hookbox uninstall`. */
export function uninstallCommand(args: string[]): Promise<number> {
  return run(args, "uninstall");
}

async function run(args: string[], mode: "install" | "uninstall"): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      agent: { type: "string" },
      project: { type: "string" },
      user: { type: "boolean", default: false },
      http: { type: "string" },
      command: { type: "string" },
    },
    strict: true,
  });
  const agent = values.agent;
  if (agent === undefined) {
    throw new UsageError(`--agent NAME is required; usage: ${INSTALL_USAGE}`);
  }
  if (!isAgentName(agent)) {
    throw new UsageError(`unknown agent "${agent}"; one of ${AGENTS.join(", ")}`);
  }
  if (agent === "agenthooks") {
    throw new UsageError(
      "agenthooks reads hook folders (HOOK.md), hookbox's own format: put hooks in .agents/hooks/ " +
        "and have the agent run `hookbox dispatch --agent agenthooks`; there is no config file to write",
    );
  }
  if (values.user && values.project !== undefined) {
    throw new UsageError("--project and --user exclude each other");
  }
  if (values.http !== undefined) {
    if (mode === "uninstall") throw new UsageError("--http is for install only");
    if (!HTTP_AGENTS.includes(agent)) {
      throw new UsageError(`${agent} has no HTTP hooks; HTTP hooks: ${HTTP_AGENTS.join(", ")}`);
    }
    if (!/^https?:\/\/[^/]/.test(values.http)) {
      throw new UsageError(`--http must be an http(s) URL, got ${values.http}`);
    }
  }
  const file = configPath(agent, values.user, values.project);
  if (!values.user) await insideProject(file, absolute(values.project ?? "."));
  const text = await readConfig(file);
  let before: Record<string, unknown>;
  try {
    before = parseConfigText(text ?? "");
  } catch (err) {
    if (!(err instanceof ConfigTextError)) throw err;
    throw new UsageError(`${file} is ${err.message}; not touching it — fix or edit it by hand`);
  }
  if (mode === "install") {
    const after = installInto(before, {
      agent,
      ...(values.command ? { command: values.command } : {}),
      ...(values.http ? { http: values.http } : {}),
    });
    await Deno.mkdir(file.slice(0, file.lastIndexOf("/")), { recursive: true });
    await Deno.writeTextFile(file, editConfigText(text ?? "", before, after));
    console.error(`hookbox: installed for ${agent} in ${file}`);
    return EXIT.allow;
  }
  if (text === null) {
    console.error(`hookbox: nothing to uninstall: ${file} does not exist`);
    return EXIT.allow;
  }
  const after = uninstallFrom(before, agent);
  const edited = editConfigText(text, before, after);
  if (isEmptyConfig(after) && !hasComments(edited)) await Deno.remove(file);
  else await Deno.writeTextFile(file, edited);
  console.error(`hookbox: uninstalled for ${agent} from ${file}`);
  return EXIT.allow;
}

function configPath(agent: InstallableAgent, user: boolean, project: string | undefined): string {
  if (user) {
    const home = Deno.env.get("HOME");
    if (!home) throw new UsageError("--user needs $HOME");
    return `${home}/${CONFIG_FILES[agent].user}`;
  }
  return `${absolute(project ?? ".")}/${CONFIG_FILES[agent].project}`.replace(/\/+/g, "/");
}

/** Largest agent config file read (they are a few KiB). */
const MAX_CONFIG_BYTES = 1024 * 1024;

/**
 * Refuses a project config path that symbolic links lead out of the project
 * (a cloned repository's `.gemini -> ~/.claude`): install writes where the
 * path resolves, so that must stay inside the project.
 */
async function insideProject(file: string, project: string): Promise<void> {
  const root = await Deno.realPath(project);
  for (let path = file; path.startsWith(project) && path.length >= project.length;) {
    let real: string;
    try {
      real = await Deno.realPath(path);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
      path = path.slice(0, path.lastIndexOf("/"));
      continue;
    }
    if (!isInside(real, root)) {
      throw new UsageError(
        `${path} resolves to ${real}, outside the project ${root}; not touching ${file}`,
      );
    }
    return;
  }
}

/** The file's text (at most MAX_CONFIG_BYTES), or null when there is no file. */
async function readConfig(file: string): Promise<string | null> {
  try {
    return new TextDecoder().decode(await readCappedFile(file, MAX_CONFIG_BYTES));
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    if (isHookboxError(err)) throw new UsageError(`${err.message}; not touching it`);
    throw err;
  }
}
