/**
 * `hookbox doctor --agent NAME [--project DIR | --user]`: runs a synthetic
 * event of every event hookbox is installed for through the exact installed
 * command (or HTTP hook), and says per event what the agent would get — so
 * an install that silently does nothing, or a command that fails, is seen
 * before an agent depends on it.
 */
import { parseArgs } from "node:util";
import { parseOptions, usageLine } from "./commands.ts";
import { absolute } from "../host-deno/fs.ts";
import { AGENT_EVENTS, type AgentName } from "../agents/adapters.ts";
import { type InstallableAgent, installedEntries, parseConfigText } from "../agents/install.ts";
import { EXIT } from "./_io.ts";
import { configPath, configuredAgent, ignoredByAgent, readConfig, TRUST_STEPS } from "./install.ts";

/** Most time one synthetic event may take, ms (a first compile included). */
const EVENT_TIMEOUT_MS = 120_000;

/** Runs the command; returns 0 when every installed event answered as the agent expects. */
export async function doctorCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: parseOptions("doctor"),
    strict: true,
  });
  const agent = configuredAgent(values, usageLine("doctor"));
  const project = absolute(values.project ?? ".");
  const file = configPath(agent, values.user, values.project);
  const text = await readConfig(file);
  if (text === null) {
    console.log(`${file}: no such file; run hookbox install --agent ${agent} first`);
    return EXIT.bad;
  }
  let bad = 0;
  const ignored = ignoredByAgent(agent, text);
  if (ignored !== null) {
    console.log(`${file}: has ${ignored}; ${agent} ignores the whole file, so no hook in it runs`);
    bad++;
  }
  const entries = installedEntries(parseConfigText(text), agent);
  if (entries.length === 0) {
    console.log(`${file}: hookbox is not installed for ${agent}`);
    return EXIT.bad;
  }
  const mapped = Object.keys(AGENT_EVENTS[agent]);
  for (const missing of mapped.filter((e) => !entries.some((x) => x.event === e))) {
    console.log(`${missing}: not installed (hookbox maps it; run install again)`);
  }
  for (const entry of entries) {
    const payload = syntheticPayload(agent, entry.event, project);
    const verdict = entry.command !== undefined
      ? await viaCommand(agent, entry.command, payload, project)
      : await viaHttp(entry.url!, payload);
    if (!verdict.ok) bad++;
    console.log(`${entry.event}: ${verdict.text}`);
  }
  const trust = TRUST_STEPS[agent];
  if (trust) console.log(`note: ${trust}`);
  console.log(bad === 0 ? "ok: every installed event answered" : `${bad} problem(s)`);
  return bad === 0 ? EXIT.allow : EXIT.bad;
}

interface Verdict {
  ok: boolean;
  text: string;
}

/** Runs the installed command line as the agent does (`sh -c`, in the project, payload on stdin). */
async function viaCommand(
  agent: AgentName,
  command: string,
  payload: string,
  cwd: string,
): Promise<Verdict> {
  const started = performance.now();
  const child = new Deno.Command("sh", {
    args: ["-c", command],
    cwd,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), EVENT_TIMEOUT_MS);
  try {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(payload)).catch(() => {});
    await writer.close().catch(() => {});
    const out = await child.output();
    const ms = Math.round(performance.now() - started);
    const stdout = new TextDecoder().decode(out.stdout).trim();
    const stderr = new TextDecoder().decode(out.stderr).trim();
    return readAnswer(agent, out.code, stdout, stderr, ms);
  } finally {
    clearTimeout(timer);
  }
}

/** What an answer means to the agent. */
function readAnswer(
  agent: AgentName,
  code: number,
  stdout: string,
  stderr: string,
  ms: number,
): Verdict {
  const first = (text: string) => text.split("\n")[0]!.slice(0, 300);
  if (code === 2) return { ok: true, text: `block (exit 2): ${first(stderr)} [${ms} ms]` };
  if (code !== 0) {
    return {
      ok: false,
      text: `FAILED: exit ${code}, which ${agent} treats as a non-blocking error: ` +
        `${first(stderr) || "(no message)"} [${ms} ms]`,
    };
  }
  if (stdout === "") return { ok: true, text: `no opinion (allow) [${ms} ms]` };
  let answer: unknown;
  try {
    answer = JSON.parse(stdout);
  } catch {
    return { ok: false, text: `FAILED: stdout is not one JSON object: ${first(stdout)}` };
  }
  if (typeof answer !== "object" || answer === null || Array.isArray(answer)) {
    return { ok: false, text: `FAILED: stdout is not a JSON object: ${first(stdout)}` };
  }
  const notes = stderr ? `; stderr: ${first(stderr)}` : "";
  return { ok: true, text: `answers ${first(stdout)} [${ms} ms]${notes}` };
}

/** Posts the payload to an installed HTTP hook, with `$HOOKBOX_KEY` as the agent would send it. */
async function viaHttp(url: string, payload: string): Promise<Verdict> {
  const key = Deno.env.get("HOOKBOX_KEY");
  if (!key) {
    return {
      ok: false,
      text: `FAILED: HTTP hook ${url} needs $HOOKBOX_KEY in the agent's environment`,
    };
  }
  const started = performance.now();
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: payload,
      signal: AbortSignal.timeout(EVENT_TIMEOUT_MS),
    });
    const body = await response.text();
    const ms = Math.round(performance.now() - started);
    if (!response.ok) {
      return {
        ok: false,
        text: `FAILED: HTTP ${response.status}: ${body.slice(0, 300)} [${ms} ms]`,
      };
    }
    return { ok: true, text: `answers ${body.slice(0, 300)} [${ms} ms]` };
  } catch (err) {
    return { ok: false, text: `FAILED: ${url}: ${(err as Error).message}` };
  }
}

/** A harmless payload of `agent`'s `event`, in its own field names. */
export function syntheticPayload(agent: InstallableAgent, event: string, cwd: string): string {
  const tool = { command: "echo hookbox-doctor" };
  const session = "hookbox-doctor";
  switch (agent) {
    case "copilot":
      return JSON.stringify({
        sessionId: session,
        timestamp: Date.now(),
        cwd,
        toolName: "bash",
        toolArgs: JSON.stringify(tool),
        prompt: "hookbox doctor",
        stopReason: "end_turn",
      });
    case "windsurf":
      return JSON.stringify({
        agent_action_name: event,
        trajectory_id: session,
        execution_id: session,
        tool_info: {
          command_line: tool.command,
          cwd,
          file_path: `${cwd}/README.md`,
          user_prompt: "hookbox doctor",
        },
      });
    case "cursor":
      return JSON.stringify({
        conversation_id: session,
        generation_id: session,
        hook_event_name: event,
        workspace_roots: [cwd],
        tool_name: "Shell",
        tool_input: tool,
        command: tool.command,
        prompt: "hookbox doctor",
      });
    default:
      return JSON.stringify({
        session_id: session,
        cwd,
        hook_event_name: event,
        tool_name: "Bash",
        tool_input: tool,
        tool_response: "hookbox-doctor",
        prompt: "hookbox doctor",
        prompt_response: "hookbox doctor done",
        last_assistant_message: "hookbox doctor done",
        stop_hook_active: false,
        source: "startup",
      });
  }
}
