/**
 * The stop gate's facts that an agent's payload does not carry (SPEC §8):
 * how many times this session's stop has been bounced (`stop_count`), kept
 * per session across hook processes in the cache folder, and the agent's
 * last answer read from its transcript where the payload lacks it (Copilot's
 * `agentStop` carries no message; Gemini's `prompt_response` is the whole
 * turn). Everything read is bounded; a fact that cannot be read is left as
 * the adapter made it.
 */
import { defaultCacheDir } from "../host-deno/cache_dir.ts";
import { type FileEnd, readFileEnd } from "../host-deno/fs.ts";

/** Sessions whose counters are kept; past it the oldest are removed. */
const MAX_SESSIONS = 1000;
/** Most of a transcript's tail read for the last answer, bytes. */
const TRANSCRIPT_TAIL = 1024 * 1024;

/**
 * This stop's `stop_count`: 0 for a stop the agent says is not a retry
 * (`stop_hook_active` false), else one more than the session's last count.
 * Kept in `<cache>/stops/<sha256(agent:session)>`, written only for a retry:
 * a first stop removes the session's counter (a missing counter reads as 0),
 * so the common stop costs one removal and the folder only holds sessions
 * whose stop was bounced. A counter that cannot be kept is a line in
 * `problems` (else on stderr); the count is still given.
 */
export async function stopCount(
  agent: string,
  session: string,
  retry: boolean,
  cacheDir: string = defaultCacheDir(),
  problems?: string[],
): Promise<number> {
  const dir = `${cacheDir}/stops`;
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(`${agent}:${session}`),
  );
  const name = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
  const file = `${dir}/${name}`;
  let count = 0;
  if (retry) {
    const last = Number.parseInt(await Deno.readTextFile(file).catch(() => "0"), 10);
    count = Number.isSafeInteger(last) && last >= 0 ? last + 1 : 1;
  }
  try {
    if (count === 0) {
      await Deno.remove(file).catch((err) => {
        if (!(err instanceof Deno.errors.NotFound)) throw err;
      });
      return 0;
    }
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
    const temp = `${file}.${crypto.randomUUID()}`;
    await Deno.writeTextFile(temp, String(count), { mode: 0o600 });
    await Deno.rename(temp, file);
    if (count === 1) await prune(dir);
  } catch (err) {
    const line = `hookbox: could not keep the stop count in ${dir}: ${(err as Error).message}`;
    if (problems === undefined) console.error(line);
    else problems.push(line);
  }
  return count;
}

/** Removes the oldest counters past {@linkcode MAX_SESSIONS}. */
async function prune(dir: string): Promise<void> {
  const files: { path: string; at: number }[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (!entry.isFile) continue;
    const info = await Deno.lstat(`${dir}/${entry.name}`).catch(() => null);
    files.push({ path: `${dir}/${entry.name}`, at: info?.mtime?.getTime() ?? 0 });
    if (files.length > 10 * MAX_SESSIONS) break;
  }
  if (files.length <= MAX_SESSIONS) return;
  files.sort((a, b) => a.at - b.at);
  for (const f of files.slice(0, files.length - MAX_SESSIONS)) {
    await Deno.remove(f.path).catch(() => {});
  }
}

/**
 * The agent's last answer in the transcript at `path` (JSON lines, or one
 * JSON document with a message list), or null. Only a regular file is read
 * ({@linkcode readTail}), only its last {@linkcode TRANSCRIPT_TAIL} bytes.
 */
export async function lastAnswer(path: unknown, waitFor?: string): Promise<string | null> {
  if (typeof path !== "string" || !path.startsWith("/")) return null;
  if (waitFor !== undefined) await flushed(path, waitFor);
  const tail = await readTail(path, TRANSCRIPT_TAIL);
  if (tail === null) return null;
  return lastAnswerIn(new TextDecoder().decode(tail.bytes), tail.whole);
}

/**
 * The last `max` bytes of `path` if it is a regular file itself, not a link
 * to one (see {@linkcode readFileEnd}): a FIFO, device or link put in place of
 * the transcript can make a hook call neither hang nor read another file.
 */
export function readTail(path: string, max: number): Promise<FileEnd | null> {
  return readFileEnd(path, max, { end: "tail", follow: false });
}

/** Longest wait for an agent to write its transcript up to the current hook call, ms. */
const FLUSH_WAIT_MS = 2000;
/** How often the transcript is looked at meanwhile (a `stat`; read only when it changed), ms. */
const FLUSH_POLL_MS = 5;

/**
 * Waits (at most {@linkcode FLUSH_WAIT_MS}) until the transcript's tail holds
 * `marker`: Copilot writes its events file after it starts the agentStop hook
 * (measured with 1.0.102: the file did not exist yet when the hook ran, and
 * held the turn ~0.3 s later), and the hook's own start event, which carries
 * the payload's timestamp, comes after the answer it is about.
 */
async function flushed(path: string, marker: string): Promise<void> {
  const deadline = Date.now() + FLUSH_WAIT_MS;
  let seen = "";
  for (;;) {
    const info = await Deno.lstat(path).catch(() => null);
    // Read again only when the file changed since the last look.
    const now = info?.isFile ? `${info.size}:${info.mtime?.getTime()}` : "";
    if (now !== "" && now !== seen) {
      seen = now;
      const tail = await readTail(path, 64 * 1024);
      if (tail !== null && new TextDecoder().decode(tail.bytes).includes(marker)) return;
    }
    if (Date.now() >= deadline) return;
    await new Promise((resolve) => setTimeout(resolve, FLUSH_POLL_MS));
  }
}

/** The last assistant text in transcript `text` (see {@linkcode lastAnswer}). */
export function lastAnswerIn(text: string, whole: boolean): string | null {
  const records: unknown[] = [];
  if (whole) {
    try {
      const doc = JSON.parse(text);
      const list = Array.isArray(doc) ? doc : (doc?.messages ?? doc?.history ?? null);
      if (Array.isArray(list)) records.push(...list);
    } catch { /* JSON lines */ }
  }
  if (records.length === 0) {
    for (const line of text.split("\n")) {
      try {
        records.push(JSON.parse(line));
      } catch { /* a cut first line, or not JSON */ }
    }
  }
  for (let i = records.length - 1; i >= 0; i--) {
    const said = assistantText(records[i]);
    if (said !== null && said.trim() !== "") return said;
  }
  return null;
}

const ASSISTANT = /^(assistant|model|gemini|agent)([._-]?message)?$/i;

/** The text of one transcript record when an assistant (model) said it, else null. */
function assistantText(record: unknown): string | null {
  if (typeof record !== "object" || record === null) return null;
  const r = record as Record<string, unknown>;
  const message = typeof r.message === "object" && r.message !== null
    ? r.message as Record<string, unknown>
    : typeof r.data === "object" && r.data !== null
    ? r.data as Record<string, unknown>
    : r;
  const who = [r.type, r.role, message.role].find((v) =>
    typeof v === "string" && ASSISTANT.test(v)
  );
  if (who === undefined) return null;
  return textOf(message.content ?? r.content ?? message.parts ?? message.text);
}

function textOf(content: unknown): string | null {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return null;
  const parts = content
    .map((c) => typeof c === "string" ? c : typeof c?.text === "string" ? c.text : "")
    .filter((t) => t !== "");
  return parts.length > 0 ? parts.join("\n") : null;
}
