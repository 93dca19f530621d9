/**
 * `hookbox dispatch --agent NAME --remote URL`: the one-shot hook command of
 * an agent, answered by a running `hookbox serve` instead of in-process. It
 * loads nothing but this file (no schemas, no runtime), reads the agent's
 * payload, POSTs it to `URL/v1/agents/NAME/events?form=command` with the
 * tenant key from `$HOOKBOX_KEY` (never on the command line, where `ps` would
 * show it), and prints and exits with what the server answers. `$HOOKBOX_REMOTE`
 * stands for `--remote`, so the lines `hookbox install` writes switch to the
 * remote form by the agent's environment alone. An agent whose
 * hook config cannot use HTTP hooks gets the service's speed this way.
 *
 * @module
 */
import { readAllCapped, readStdin, StdinTooLarge, UsageError } from "./_io.ts";

/**
 * Time the server gets to answer, unless `--timeout-ms` says otherwise: more
 * than the 15 s the service gives an agent's hooks (`AGENT_EVENT_MS`), so the
 * answer a deadline makes (a closed guard's block) reaches the agent instead
 * of a failed call it lets through; less than Copilot's 30 s.
 */
export const REMOTE_TIMEOUT_MS = 20_000;
/** Largest answer read from the server. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
const AGENT_NAME = /^[a-z][a-z0-9-]{0,31}$/;

interface RemoteArgs {
  agent: string;
  event: string | null;
  remote: URL;
  timeoutMs: number;
  strict: boolean;
}

/**
 * Runs the command; returns the exit code. A server that cannot be asked
 * (unreachable, refusing, answering nonsense) is one line and exit 1 — the
 * agent's non-blocking error — unless `--strict` (or `$HOOKBOX_STRICT=1`):
 * then it is the agent's block, since the guards it would have run are unknown.
 */
export async function remoteDispatchCommand(args: string[]): Promise<number> {
  const options = parseRemoteArgs(args);
  try {
    return await askRemote(options);
  } catch (err) {
    // --strict: whatever kept the service's answer from this call is the agent's block.
    if (!options.strict) throw err;
    const { isAgentName } = await import("../agents/adapters.ts");
    const { unreadableBlock } = await import("../agents/unreadable.ts");
    const reason = `hookbox could not ask its service (${
      (err as Error)?.message ?? err
    }) and runs --strict`;
    const answer = isAgentName(options.agent)
      ? unreadableBlock(options.agent, options.event ?? undefined, reason, "hookbox")
      : { exitCode: 2, stdout: "", stderr: reason };
    if (answer.stdout) console.log(answer.stdout);
    if (answer.stderr) console.error(answer.stderr);
    return answer.exitCode;
  }
}

async function askRemote(options: RemoteArgs): Promise<number> {
  const key = Deno.env.get("HOOKBOX_KEY");
  if (!key) throw new UsageError("--remote needs the tenant key in $HOOKBOX_KEY");
  // Over the stdin cap, the head goes: the service cannot read it either, and answers it as its
  // closed guards say (SPEC §4.7), which only it knows.
  const payload = await readStdin().catch((err) => {
    if (err instanceof StdinTooLarge) return err.head;
    throw err;
  });
  const url = new URL(`v1/agents/${options.agent}/events`, options.remote);
  url.searchParams.set("form", "command");
  if (options.event) url.searchParams.set("event", options.event);
  let res: Response;
  try {
    res = await fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: payload,
      signal: AbortSignal.timeout(options.timeoutMs),
    });
  } catch (err) {
    throw new UsageError(`remote ${options.remote.origin}: ${(err as Error).message}`);
  }
  let text: string;
  try {
    text = await cappedText(res);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    // A body that stops or trickles past the time given: as a server that cannot be asked.
    throw new UsageError(
      `remote ${options.remote.origin}: the answer was not read: ${(err as Error).message}`,
    );
  }
  if (!res.ok) throw new UsageError(`remote answered ${res.status}: ${text.slice(0, 300)}`);
  const answer = parseAnswer(text);
  if (answer.stdout) console.log(answer.stdout);
  if (answer.stderr) console.error(answer.stderr);
  return answer.exitCode;
}

function parseRemoteArgs(args: string[]): RemoteArgs {
  const values = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--strict") {
      values.set(arg, "1");
      continue;
    }
    const eq = arg.indexOf("=");
    const [flag, inline] = eq > 0 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, undefined];
    if (!["--agent", "--event", "--remote", "--timeout-ms"].includes(flag)) {
      throw new UsageError(`${flag} is not an option of dispatch --remote`);
    }
    const value = inline ?? args[++i];
    if (value === undefined || value === "") throw new UsageError(`${flag} needs a value`);
    values.set(flag, value);
  }
  const agent = values.get("--agent");
  if (!agent || !AGENT_NAME.test(agent)) throw new UsageError("--remote needs --agent NAME");
  const where = values.get("--remote") ?? Deno.env.get("HOOKBOX_REMOTE") ?? "";
  let remote: URL;
  try {
    remote = new URL(where);
  } catch {
    throw new UsageError(`--remote (or $HOOKBOX_REMOTE) must be a URL, got "${where}"`);
  }
  if (remote.protocol !== "http:" && remote.protocol !== "https:") {
    throw new UsageError("--remote must be an http:// or https:// URL");
  }
  if (!remote.pathname.endsWith("/")) remote.pathname += "/";
  const timeoutMs = Number(values.get("--timeout-ms") ?? REMOTE_TIMEOUT_MS);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 600_000) {
    throw new UsageError("--timeout-ms must be an integer from 1 to 600000");
  }
  const strict = values.has("--strict") || Deno.env.get("HOOKBOX_STRICT") === "1";
  return { agent, event: values.get("--event") ?? null, remote, timeoutMs, strict };
}

async function cappedText(res: Response): Promise<string> {
  if (!res.body) return "";
  const bytes = await readAllCapped(
    res.body,
    MAX_ANSWER_BYTES,
    () => new UsageError(`the remote answer is over ${MAX_ANSWER_BYTES} bytes`),
  );
  return new TextDecoder().decode(bytes);
}

/** The server's `{exit_code, stdout, stderr}`, checked: it decides what the agent does. */
function parseAnswer(text: string): { exitCode: number; stdout: string; stderr: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageError("the remote answer is not JSON");
  }
  const a = value as Record<string, unknown>;
  const ok = typeof value === "object" && value !== null && Number.isInteger(a.exit_code) &&
    (a.exit_code as number) >= 0 && (a.exit_code as number) <= 255 &&
    typeof a.stdout === "string" && typeof a.stderr === "string";
  if (!ok) throw new UsageError("the remote answer is not {exit_code, stdout, stderr}");
  return {
    exitCode: a.exit_code as number,
    stdout: a.stdout as string,
    stderr: a.stderr as string,
  };
}
