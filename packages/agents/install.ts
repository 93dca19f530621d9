/**
 * `hookbox install` / `uninstall` (SPEC §8): hookbox's entries in an agent's
 * own hook config — one per agent event that maps to a §1 event, each a
 * command line holding `dispatch --agent NAME` (or, with `--http`, the
 * agent's HTTP hook pointing at `POST /v1/agents/NAME/events`). Pure
 * transforms here; the CLI reads and writes the files. Everything else in
 * the file is kept — other keys, their formatting, and comments (Gemini CLI
 * and others read their settings as JSON with comments): only the changed
 * event lists are rewritten. Installing twice gives the same file;
 * uninstalling removes exactly what install added.
 *
 * @module
 */
import {
  applyEdits,
  createScanner,
  findNodeAtLocation,
  modify,
  type Node as JsonNode,
  parse,
  type ParseError,
  parseTree,
  stripComments,
} from "jsonc-parser";
import { MAX_JSON_DEPTH } from "../core/schema/depth.ts";
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
  /** The agent whose configuration is written. */
  agent: InstallableAgent;
  /** The hookbox command. @default "hookbox" */
  command?: string;
  /** Words appended to the command line (shell-quoted already), e.g. `--hooks-dir DIR`. @default "" */
  extraArgs?: string;
  /** Base URL of a `hookbox serve` to register HTTP hooks with instead of the command. */
  http?: string;
}

/** A JSON object (an agent's configuration, or a part of it). */
export type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** The handler hookbox registers for one agent event. */
function handler(options: InstallOptions, event: string): Json {
  const { agent } = options;
  if (options.http !== undefined) {
    // The event rides in the URL too: a body the service cannot read still names its event.
    const url = `${options.http.replace(/\/+$/, "")}/v1/agents/${agent}/events?event=${
      encodeURIComponent(event)
    }`;
    if (agent === "claude-code") {
      return {
        type: "http",
        url,
        headers: { Authorization: "Bearer $HOOKBOX_KEY" },
        allowedEnvVars: ["HOOKBOX_KEY"],
      };
    }
    return { type: "http", url };
  }
  const line = `${options.command ?? "hookbox"} dispatch --agent ${agent} --event ${event}${
    options.extraArgs ? ` ${options.extraArgs}` : ""
  }`;
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

/** One hookbox handler found in an agent's config. */
export interface InstalledEntry {
  /** The agent's event it is registered for. */
  event: string;
  /** The command line, for a command hook. */
  command?: string;
  /** The URL, for an HTTP hook. */
  url?: string;
}

/** hookbox's handlers in `config` for `agent`, per event, in the file's order. */
export function installedEntries(config: Json, agent: AgentName): InstalledEntry[] {
  const hooks = isObj(config.hooks) ? config.hooks : {};
  const found: InstalledEntry[] = [];
  for (const [event, list] of Object.entries(hooks)) {
    if (!Array.isArray(list)) continue;
    const handlers = list.flatMap((item) =>
      isObj(item) && Array.isArray(item.hooks) ? item.hooks : [item]
    );
    for (const h of handlers) {
      if (!isOurs(agent, h) || !isObj(h)) continue;
      const command = typeof h.command === "string" ? h.command : h.bash;
      if (typeof command === "string") found.push({ event, command });
      else if (typeof h.url === "string") found.push({ event, url: h.url });
    }
  }
  return found;
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

/** Why a config file's text cannot be edited (not JSON, or not an object). */
export class ConfigTextError extends Error {
  /** Always `ConfigTextError`. */
  override name = "ConfigTextError";
}

/**
 * The value of a config file's text: JSON, with comments and trailing commas
 * allowed. Throws {@linkcode ConfigTextError} on anything else.
 */
export function parseConfigText(text: string): Json {
  if (text.trim() === "") return {};
  // The parser recurses per level: a hostile file (a cloned repository's
  // settings) must not overflow the stack.
  if (nesting(text) > MAX_JSON_DEPTH) {
    throw new ConfigTextError(`nested deeper than ${MAX_JSON_DEPTH} levels`);
  }
  const errors: ParseError[] = [];
  const value: unknown = parse(text, errors, { allowTrailingComma: true });
  if (errors.length > 0) {
    throw new ConfigTextError(`not JSON: syntax error at offset ${errors[0]!.offset}`);
  }
  if (!isObj(value)) throw new ConfigTextError("not a JSON object");
  return value;
}

// jsonc-parser's SyntaxKind values (a const enum, which isolated modules cannot read).
const OPEN_BRACE = 1;
const CLOSE_BRACE = 2;
const OPEN_BRACKET = 3;
const CLOSE_BRACKET = 4;
const EOF = 17;

/** Deepest nesting of objects and arrays in JSON(C) text, counted token by token. */
function nesting(text: string): number {
  const scanner = createScanner(text, true);
  let depth = 0;
  let deepest = 0;
  for (let token: number = scanner.scan(); token !== EOF; token = scanner.scan()) {
    if (token === OPEN_BRACE || token === OPEN_BRACKET) deepest = Math.max(deepest, ++depth);
    else if (token === CLOSE_BRACE || token === CLOSE_BRACKET) depth--;
  }
  return deepest;
}

/**
 * `text` (a config whose value is `before`) edited to hold `after`. Only
 * what changed is touched: under `hooks`, list items are removed and
 * appended one by one and new event lists added as new properties, in the
 * file's own indentation and line endings; every other byte stays, comments
 * included, so uninstall gives back the text install started from.
 */
export function editConfigText(text: string, before: Json, after: Json): string {
  if (text.trim() === "") return `${JSON.stringify(after, null, 2)}\n`;
  const editor = new TextEditor(text);
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const was = before[key];
    const now = after[key];
    if (same(was, now)) continue;
    if (key !== "hooks" || !isObj(was) || !isObj(now)) {
      editor.set([key], now);
      continue;
    }
    for (const event of new Set([...Object.keys(was), ...Object.keys(now)])) {
      const a = was[event];
      const b = now[event];
      if (same(a, b)) continue;
      if (Array.isArray(a) && Array.isArray(b) && b.length > 0) editor.editList([key, event], a, b);
      else editor.set([key, event], b);
    }
  }
  // The edits must give exactly `after`; should they not, write it plainly.
  return same(parse(editor.text, [], { allowTrailingComma: true }), after)
    ? editor.text
    : `${JSON.stringify(after, null, 2)}\n`;
}

/** Edits JSON(C) text in place: removals through jsonc-parser, insertions as new lines. */
class TextEditor {
  readonly #eol: string;
  readonly #unit: string;
  constructor(public text: string) {
    this.#eol = text.includes("\r\n") ? "\r\n" : "\n";
    const indent = /^([ \t]+)\S/m.exec(text)?.[1] ?? "  ";
    this.#unit = indent.startsWith("\t") ? "\t" : indent;
  }

  /** Sets (or, with `undefined`, removes) the value at `path`. */
  set(path: string[], value: unknown): void {
    const node = findNodeAtLocation(parseTree(this.text)!, path);
    if (value === undefined) {
      if (node !== undefined) this.#remove(node);
      return;
    }
    if (node !== undefined) {
      this.text = applyEdits(this.text, modify(this.text, path, value, {}));
      return;
    }
    const parent = findNodeAtLocation(parseTree(this.text)!, path.slice(0, -1));
    if (parent?.type !== "object") {
      this.text = applyEdits(this.text, modify(this.text, path, value, {}));
      return;
    }
    this.#append(parent, `${JSON.stringify(path.at(-1))}: `, value);
  }

  /** Turns the list at `path` from `was` into `now`: removed items go, new ones are appended. */
  editList(path: string[], was: unknown[], now: unknown[]): void {
    let kept = 0;
    const gone: number[] = [];
    was.forEach((item, i) => {
      if (kept < now.length && same(item, now[kept])) kept++;
      else gone.push(i);
    });
    for (const i of gone.reverse()) {
      this.#remove(findNodeAtLocation(parseTree(this.text)!, [...path, i])!);
    }
    for (const item of now.slice(kept)) {
      this.#append(findNodeAtLocation(parseTree(this.text)!, path)!, "", item);
    }
  }

  /** Appends `prefix` + `value` as the last member of the object or array `node`. */
  #append(node: JsonNode, prefix: string, value: unknown): void {
    const outer = this.#indentAt(node.offset);
    const last = node.children?.at(-1);
    const inner = last !== undefined && this.#startsLine(last.offset)
      ? this.#indentAt(last.offset)
      : outer + this.#unit;
    const json = JSON.stringify(value, null, this.#unit).split("\n").join(this.#eol + inner);
    const member = `${this.#eol}${inner}${prefix}${json}`;
    if (last !== undefined) {
      const at = last.offset + last.length;
      this.text = `${this.text.slice(0, at)},${member}${this.text.slice(at)}`;
    } else {
      const at = node.offset + 1;
      const close = this.text.slice(at, node.offset + node.length - 1).trim() === ""
        ? `${this.#eol}${outer}${this.text[node.offset + node.length - 1]}`
        : null;
      this.text = close === null
        ? `${this.text.slice(0, at)}${member}${this.text.slice(at)}`
        : `${this.text.slice(0, at)}${member}${close}${this.text.slice(node.offset + node.length)}`;
    }
  }

  /**
   * Removes a member (an array item, or the property whose value is `node`)
   * with the separator before it — the inverse of {@linkcode #append}.
   */
  #remove(node: JsonNode): void {
    const member = node.parent?.type === "property" ? node.parent : node;
    const siblings = member.parent!.children!;
    const i = siblings.indexOf(member);
    const end = (n: JsonNode) => n.offset + n.length;
    const [from, to] = i > 0
      ? [end(siblings[i - 1]!), end(member)]
      : siblings.length > 1
      ? [member.offset, siblings[1]!.offset]
      : [member.parent!.offset + 1, end(member.parent!) - 1];
    this.text = this.text.slice(0, from) + this.text.slice(to);
  }

  /** The indentation of the line holding `offset`. */
  #indentAt(offset: number): string {
    const start = this.text.lastIndexOf("\n", offset - 1) + 1;
    return /^[ \t]*/.exec(this.text.slice(start, offset))![0];
  }

  #startsLine(offset: number): boolean {
    const start = this.text.lastIndexOf("\n", offset - 1) + 1;
    return this.text.slice(start, offset).trim() === "";
  }
}

/** Equal JSON values; the order of an object's keys does not matter (list order does). */
function same(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length &&
      a.every((item, i) => same(item, b[i]));
  }
  if (isObj(a) && isObj(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length &&
      keys.every((k) => Object.hasOwn(b, k) && same(a[k], b[k]));
  }
  return a === b;
}

/** True when `text` holds comments (a file of nothing but comments is kept, not deleted). */
export function hasComments(text: string): boolean {
  return stripComments(text) !== text;
}
