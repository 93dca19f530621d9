/**
 * `hookbox install` / `uninstall` (SPEC §8): hookbox's entries in an agent's
 * own hook config — one per agent event that maps to a §1 event, each a
 * command line holding `dispatch --agent NAME` (or, with `--http`, the
 * agent's HTTP hook pointing at `POST /v1/agents/NAME/events`). Pure JSON
 * transforms here; the CLI reads and writes the files. Everything else in
 * the file is kept; installing twice gives the same file; uninstalling
 * removes exactly what install added.
 *
 * @module
 */
import { AGENT_EVENTS, type AgentName } from "./adapters.ts";

/** Agents whose config hookbox can write (Agent Hooks reads hook folders, hookbox's own format). */
export type InstallableAgent = Exclude<AgentName, "agenthooks">;

/** Where an agent keeps its hooks, relative to the project folder or to `$HOME`. */
export const CONFIG_FILES: Record<InstallableAgent, { project: string; user: string }> = {
  "claude-code": { project: ".claude/settings.json", user: ".claude/settings.json" },
  codex: { project: ".codex/hooks.json", user: ".codex/hooks.json" },
  "gemini-cli": { project: ".gemini/settings.json", user: ".gemini/settings.json" },
  cursor: { project: ".cursor/hooks.json", user: ".cursor/hooks.json" },
  // Copilot reads every file in its hooks folder: hookbox gets a file of its own.
  copilot: { project: ".github/hooks/hookbox.json", user: ".copilot/hooks/hookbox.json" },
  windsurf: { project: ".windsurf/hooks.json", user: ".codeium/windsurf/hooks.json" },
};

/** Agents that accept HTTP hooks. */
export const HTTP_AGENTS: readonly InstallableAgent[] = ["claude-code", "copilot"];

/** What to register. */
export interface InstallOptions {
  agent: InstallableAgent;
  /** The hookbox command. @default "hookbox" */
  command?: string;
  /** Base URL of a `hookbox serve` to register HTTP hooks with instead of the command. */
  http?: string;
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** The handler hookbox registers for one agent event. */
function handler(options: InstallOptions, event: string): Json {
  const { agent } = options;
  if (options.http !== undefined) {
    const url = `${options.http.replace(/\/+$/, "")}/v1/agents/${agent}/events`;
    if (agent === "claude-code") {
      return {
        type: "http",
        url,
        headers: { Authorization: "Bearer $HOOKBOX_KEY" },
        allowedEnvVars: ["HOOKBOX_KEY"],
      };
    }
    return { type: "http", url: `${url}?event=${encodeURIComponent(event)}` };
  }
  const line = `${options.command ?? "hookbox"} dispatch --agent ${agent} --event ${event}`;
  switch (agent) {
    case "gemini-cli":
      return { type: "command", name: `hookbox-${event}`, command: line };
    case "cursor":
      return { command: line };
    case "copilot":
      return { type: "command", bash: line };
    case "windsurf":
      return { command: line, show_output: true };
    default:
      return { type: "command", command: line };
  }
}

/** True when `h` is a handler hookbox installed for `agent`. */
export function isOurs(agent: AgentName, h: unknown): boolean {
  if (!isObj(h)) return false;
  const text = [h.command, h.bash, h.url].filter((v) => typeof v === "string").join(" ");
  return text.includes(`dispatch --agent ${agent} `) || text.includes(`/v1/agents/${agent}/events`);
}

/** Shapes: Claude-like agents nest handlers in matcher groups; the others list them flat. */
const GROUPED = new Set<AgentName>(["claude-code", "codex", "gemini-cli"]);

/** `config` with hookbox's entries for every mapped event of `options.agent` (replacing old ones). */
export function installInto(config: Json, options: InstallOptions): Json {
  const out = uninstallFrom(structuredClone(config), options.agent);
  if (options.agent === "cursor" || options.agent === "copilot") out.version ??= 1;
  const hooks = isObj(out.hooks) ? out.hooks : (out.hooks = {});
  for (const event of Object.keys(AGENT_EVENTS[options.agent])) {
    const list = Array.isArray(hooks[event]) ? hooks[event] as unknown[] : (hooks[event] = []);
    const entry = handler(options, event);
    list.push(GROUPED.has(options.agent) ? { hooks: [entry] } : entry);
  }
  return out;
}

/** `config` without hookbox's entries for `agent`; emptied lists and an emptied `hooks` go too. */
export function uninstallFrom(config: Json, agent: AgentName): Json {
  const out = structuredClone(config);
  if (!isObj(out.hooks)) return out;
  const hooks = out.hooks;
  for (const [event, value] of Object.entries(hooks)) {
    if (!Array.isArray(value)) continue;
    const kept: unknown[] = [];
    let touched = false;
    for (const item of value) {
      if (GROUPED.has(agent) && isObj(item) && Array.isArray(item.hooks)) {
        const inner = item.hooks.filter((h) => !isOurs(agent, h));
        if (inner.length === item.hooks.length) kept.push(item);
        else {
          touched = true;
          if (inner.length > 0) kept.push({ ...item, hooks: inner });
        }
      } else if (isOurs(agent, item)) {
        touched = true;
      } else {
        kept.push(item);
      }
    }
    if (!touched) continue;
    if (kept.length > 0) hooks[event] = kept;
    else delete hooks[event];
  }
  if (Object.keys(hooks).length === 0) delete out.hooks;
  return out;
}

/** True when nothing but what hookbox would write is left (the file can go). */
export function isEmptyConfig(config: Json): boolean {
  const keys = Object.keys(config).filter((k) => !(k === "version" && config[k] === 1));
  return keys.length === 0;
}
