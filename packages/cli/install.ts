/**
 * `hookbox install|uninstall --agent NAME [--project DIR | --user] [--http URL]
 * [--command CMD]`: writes (or removes) hookbox's entries in the agent's own
 * hook config file, keeping everything else in it (SPEC §8).
 */
import { parseArgs } from "node:util";
import { parseOptions, usageLine } from "./commands.ts";
import { absolute, readCappedFile } from "../host-deno/fs.ts";
import { isHookboxError } from "../core/errors.ts";
import { isInside } from "../core/host.ts";
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
import { parse, type ParseError, parseTree } from "jsonc-parser";
import { EXIT, UsageError } from "./_io.ts";

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
    options: parseOptions(mode),
    strict: true,
  });
  const agent = configuredAgent(values, usageLine(mode));
  if (values.http !== undefined) {
    if (mode === "uninstall") throw new UsageError("--http is for install only");
    if (!HTTP_AGENTS.includes(agent)) {
      throw new UsageError(`${agent} has no HTTP hooks; HTTP hooks: ${HTTP_AGENTS.join(", ")}`);
    }
    if (!/^https?:\/\/[^/]/.test(values.http)) {
      throw new UsageError(`--http must be an http(s) URL, got ${values.http}`);
    }
  }
  const hooksDirs = values["hooks-dir"] ?? [];
  if (hooksDirs.length > 0 && (mode === "uninstall" || values.http !== undefined)) {
    throw new UsageError("--hooks-dir is for installing the command form only");
  }
  for (const dir of hooksDirs) {
    // Written into the agent's hook command: a folder that is not there would run no hooks.
    const info = await Deno.stat(absolute(dir)).catch(() => null);
    if (!info?.isDirectory) {
      throw new UsageError(`--hooks-dir ${dir}: ${info ? "not a folder" : "no such folder"}`);
    }
  }
  if (
    (values.daemon || values["no-daemon"]) && (mode === "uninstall" || values.http !== undefined)
  ) {
    throw new UsageError("--daemon and --no-daemon are for installing the command form only");
  }
  if (values.daemon && values["no-daemon"]) {
    throw new UsageError("--daemon and --no-daemon contradict each other; pass one");
  }
  // The command form calls through the user's daemon unless told not to (docs/cli.md).
  const daemon = values.http === undefined && !values["no-daemon"];
  const named = configPath(agent, values.user, values.project);
  if (!values.user) await insideProject(named, absolute(values.project ?? "."));
  const file = await writablePath(named);
  const text = await readConfig(file);
  let before: Record<string, unknown>;
  try {
    before = parseConfigText(text ?? "");
  } catch (err) {
    if (!(err instanceof ConfigTextError)) throw err;
    throw new UsageError(`${file} is ${err.message}; not touching it — fix or edit it by hand`);
  }
  const ignored = text === null ? null : ignoredByAgent(agent, text);
  if (ignored !== null && !values.force && (mode === "install" || ignored.includes("duplicate"))) {
    throw new UsageError(
      `${file} has ${ignored}, and ${agent} ignores such a file without a word (its hooks never ` +
        `run); remove them, or pass --force to edit it anyway`,
    );
  }
  if (mode === "install") {
    const after = installInto(before, {
      agent,
      ...(values.command ? { command: values.command } : {}),
      ...(values.http ? { http: values.http } : {}),
      extraArgs: [
        ...hooksDirs.map((d) => `--hooks-dir ${shellQuote(absolute(d))}`),
        ...(daemon ? ["--daemon"] : []),
      ].join(" "),
    });
    await Deno.mkdir(file.slice(0, file.lastIndexOf("/")), { recursive: true });
    await writeAtomic(file, editedText(file, text ?? "", before, after));
    console.error(`hookbox: installed for ${agent} in ${file}`);
    const trust = TRUST_STEPS[agent];
    if (trust) console.error(`hookbox: note: ${trust}`);
    return EXIT.allow;
  }
  if (text === null) {
    console.error(`hookbox: nothing to uninstall: ${file} does not exist`);
    return EXIT.allow;
  }
  const after = uninstallFrom(before, agent);
  const edited = editedText(file, text, before, after);
  if (isEmptyConfig(after) && !hasComments(edited)) await Deno.remove(file);
  else await writeAtomic(file, edited);
  console.error(`hookbox: uninstalled for ${agent} from ${file}`);
  return EXIT.allow;
}

/**
 * The agent of `--agent` whose config file hookbox writes, with `--project`
 * and `--user` checked (install, uninstall, doctor).
 */
export function configuredAgent(
  values: { agent?: string | undefined; project?: string | undefined; user?: boolean | undefined },
  usage: string,
): InstallableAgent {
  const agent = values.agent;
  if (agent === undefined) throw new UsageError(`--agent NAME is required; usage: ${usage}`);
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
  return agent;
}

/** What each agent needs before it runs project hooks (research/real-agents.md). */
export const TRUST_STEPS: Partial<Record<InstallableAgent, string>> = {
  codex: "Codex runs a command hook only once it is trusted by hash (review it in the TUI's " +
    "/hooks, or run with --dangerously-bypass-hook-trust) and only in a trusted project " +
    '([projects."DIR"] trust_level = "trusted" in ~/.codex/config.toml); untrusted hooks are ' +
    "skipped without a message",
  "gemini-cli": "Gemini CLI loads project hooks only in a trusted workspace " +
    "(GEMINI_CLI_TRUST_WORKSPACE=true or a trusted folder); --skip-trust drops them",
  copilot: "Copilot CLI loads .github/hooks only for a trusted folder (--trust-folder, or " +
    "trustedFolders in ~/.copilot/config.json), silently otherwise",
};

/**
 * What in `text` makes `agent` ignore the whole file, or null, as measured
 * (research/real-agents.md): Claude Code ignores settings with comments or
 * trailing commas without a word, Gemini CLI refuses trailing commas. A
 * duplicate key is refused for every agent (which value wins is the reader's
 * choice, and an edit in place cannot know which one it changes).
 */
export function ignoredByAgent(agent: InstallableAgent, text: string): string | null {
  const duplicate = duplicateKey(text);
  if (duplicate !== null) return `a duplicate key "${duplicate}"`;
  if (agent !== "claude-code" && agent !== "gemini-cli") return null;
  if (agent === "claude-code" && hasComments(text)) return "comments";
  const strict: ParseError[] = [];
  parse(text, strict, { allowTrailingComma: false });
  const lax: ParseError[] = [];
  parse(text, lax, { allowTrailingComma: true });
  return strict.length > lax.length ? "a trailing comma" : null;
}

/** The first key that appears twice in one object of JSON(C) `text`, or null. */
function duplicateKey(text: string): string | null {
  const root = parseTree(text);
  const stack = root ? [root] : [];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.type === "object") {
      const seen = new Set<string>();
      for (const property of node.children ?? []) {
        const key = String(property.children?.[0]?.value);
        if (seen.has(key)) return key;
        seen.add(key);
      }
    }
    for (const child of node.children ?? []) stack.push(child);
  }
  return null;
}

/**
 * `text` edited to hold `after`; a file with comments is never rewritten
 * whole (its comments would go): when the in-place edit cannot be made,
 * install refuses.
 */
function editedText(
  file: string,
  text: string,
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): string {
  const edited = editConfigText(text, before, after);
  if (hasComments(text) && edited === `${JSON.stringify(after, null, 2)}\n`) {
    throw new UsageError(
      `${file} has comments that an edit in place cannot keep; not rewriting it — add hookbox's ` +
        `entries by hand`,
    );
  }
  return edited;
}

/**
 * The path to write the config at: the file itself, or the target of a link
 * (already checked to stay inside the project). A link to nothing is refused:
 * writing through it would create a file wherever it points.
 */
async function writablePath(file: string): Promise<string> {
  const info = await Deno.lstat(file).catch(() => null);
  if (!info?.isSymlink) return file;
  try {
    return await Deno.realPath(file);
  } catch {
    throw new UsageError(
      `${file} is a link to ${await Deno.readLink(file)}, which does not exist; not writing ` +
        `through it`,
    );
  }
}

/** Writes `text` to `file` through a temporary file and a rename: never half a config. */
async function writeAtomic(file: string, text: string): Promise<void> {
  const temp = `${file}.hookbox-${crypto.randomUUID()}`;
  const mode = (await Deno.stat(file).catch(() => null))?.mode ?? 0o644;
  try {
    await Deno.writeTextFile(temp, text, { mode: mode & 0o777, createNew: true });
    await Deno.rename(temp, file);
  } catch (err) {
    await Deno.remove(temp).catch(() => {});
    throw err;
  }
}

/** `value` as one shell word. */
function shellQuote(value: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

/** The agent's config file for the project (or the user). */
export function configPath(
  agent: InstallableAgent,
  user: boolean,
  project: string | undefined,
): string {
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
export async function readConfig(file: string): Promise<string | null> {
  try {
    return new TextDecoder().decode(await readCappedFile(file, MAX_CONFIG_BYTES));
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    if (isHookboxError(err)) throw new UsageError(`${err.message}; not touching it`);
    throw err;
  }
}
