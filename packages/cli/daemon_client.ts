/**
 * The client side of the hookbox daemon (`daemon.ts`): `hookbox dispatch
 * --agent NAME --daemon` (or `HOOKBOX_DAEMON=1`) hands its call to the
 * user's daemon over its Unix socket, and prints what the daemon answered.
 * When no daemon answers, it starts one in the background for the next call
 * and this call runs in its own process as before: the first call never
 * waits for the daemon. Loads nothing but this file.
 *
 * @module
 */

/** Most bytes of stdin a call hands to the daemon; a larger one runs in its own process. */
const MAX_DAEMON_STDIN = 16 * 1024 * 1024;

/**
 * Longest a call waits for the daemon's answer by default, ms, before it runs
 * in its own process (`HOOKBOX_DAEMON_WAIT_MS`, 1 to 60000): the daemon's
 * 15 s for the hooks of an event, and discovery.
 */
export const DAEMON_WAIT_MS = 18_000;

/**
 * A call the daemon is late for ends its hooks this long after the call's
 * start, ms (`HOOKBOX_DAEMON_DEADLINE`, read by `_executor.ts`): under the
 * shortest agent hook timeout (Copilot's 30 s), so the guards answer first.
 */
export const CALL_MS = 25_000;

/** What `ask` gives when the daemon has not answered within the wait. */
export const LATE = "late";

/** The wait for the daemon, ms: `HOOKBOX_DAEMON_WAIT_MS`, else the default (one line says why). */
export function daemonWaitMs(given = Deno.env.get("HOOKBOX_DAEMON_WAIT_MS")): number {
  if (given === undefined || given === "") return DAEMON_WAIT_MS;
  const ms = /^[0-9]{1,5}$/.test(given) ? Number(given) : 0;
  if (ms >= 1 && ms <= 60_000) return ms;
  console.error(
    `hookbox: HOOKBOX_DAEMON_WAIT_MS must be whole ms from 1 to 60000, not "${given}"; ` +
      `using ${DAEMON_WAIT_MS}`,
  );
  return DAEMON_WAIT_MS;
}

/** What the daemon answered: the agent's exit code, stdout and stderr. */
export interface DaemonAnswer {
  exit: number;
  stdout: string;
  stderr: string;
}

/** The folder of the user's daemon socket: private to the user (0700). */
export function daemonDir(): string {
  const runtime = Deno.env.get("XDG_RUNTIME_DIR");
  return runtime ? `${runtime}/hookbox` : `/tmp/hookbox-${Deno.uid() ?? "user"}`;
}

/**
 * Most daemons of one user at once, one per environment: past it a call from
 * yet another environment runs in its own process (one line says so).
 */
export const MAX_DAEMONS = 4;

/** A daemon's socket file name: `daemon-` and its environment's key (`environmentKey`). */
const SOCKET_NAME = /^daemon-[0-9a-f]{16}\.sock$/;

/**
 * The socket of the daemon for the environment `env`: each environment (the
 * variables `fingerprint` reads) has a daemon of its own, so a user's
 * sessions with another `PATH` or `HOME` each get one.
 */
export function socketPath(env: Record<string, string> = Deno.env.toObject()): string {
  return `${daemonDir()}/daemon-${environmentKey(env)}.sock`;
}

/** The variable `name` changes a call's answer (as `answer_changing` in hookbox_client.c). */
function answerChanging(name: string): boolean {
  return ["HOME", "PATH", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"].includes(name) ||
    (name.startsWith("HOOKBOX_") && !name.startsWith("HOOKBOX_DAEMON"));
}

/**
 * Sixteen hex digits naming the environment `env` in a socket's name: the sum,
 * modulo 2^64, of the 64-bit FNV-1a hash of each answer-changing `NAME=value`
 * (UTF-8), so that no order of the variables matters. The C command
 * (`environment_key` in hookbox_client.c) computes the same. Two environments
 * with one key share a socket: the daemon still compares the whole
 * `fingerprint`, and answers a call of the other in its own process.
 */
export function environmentKey(env: Record<string, string>): string {
  const mask = (1n << 64n) - 1n;
  let sum = 0n;
  for (const [name, value] of Object.entries(env)) {
    if (!answerChanging(name)) continue;
    let hash = 0xcbf29ce484222325n;
    for (const byte of new TextEncoder().encode(`${name}=${value}`)) {
      hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & mask;
    }
    sum = (sum + hash) & mask;
  }
  return sum.toString(16).padStart(16, "0");
}

/**
 * How many daemons other than `own`'s answer in the user's folder; a socket
 * nobody listens on (its daemon killed) is removed on the way.
 */
export async function otherDaemons(own: string = socketPath()): Promise<number> {
  let live = 0;
  try {
    for (const entry of Deno.readDirSync(daemonDir())) {
      const path = `${daemonDir()}/${entry.name}`;
      if (!SOCKET_NAME.test(entry.name) || path === own) continue;
      try {
        (await Deno.connect({ transport: "unix", path })).close();
        live++;
      } catch (err) {
        if (err instanceof Deno.errors.ConnectionRefused) await Deno.remove(path).catch(() => {});
        else if (!(err instanceof Deno.errors.NotFound)) live++;
      }
    }
  } catch {
    // No folder yet: no daemon.
  }
  return live;
}

/**
 * Why `dir` is not the user's own private folder, or null when it is: a
 * directory (not a link), owned by this user, with no access for group or
 * others. Another user who could write there could stand in for the daemon.
 */
export function unsafeDir(dir: string): string | null {
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(dir);
  } catch {
    return `${dir} does not exist`;
  }
  if (!info.isDirectory) return `${dir} is not a directory`;
  if (info.uid !== Deno.uid()) return `${dir} belongs to another user`;
  if ((info.mode ?? 0) & 0o077) {
    return `${dir} is open to others (mode ${((info.mode ?? 0) & 0o777).toString(8)})`;
  }
  return null;
}

/**
 * What the environment holds that changes a call's answer: a daemon started
 * with another one (another HOME, XDG folder, PATH or `HOOKBOX_*` variable)
 * does not answer the call.
 */
export function fingerprint(env: Record<string, string> = Deno.env.toObject()): string {
  const keys = Object.keys(env).filter(answerChanging).sort();
  return JSON.stringify(keys.map((k) => [k, env[k]]));
}

/**
 * One request line to the daemon, its one answer line back; null when none
 * answers, `LATE` when it has not answered within `waitMs`.
 */
export async function ask(
  request: Record<string, unknown>,
  waitMs: number = DAEMON_WAIT_MS,
): Promise<Record<string, unknown> | null | typeof LATE> {
  if (unsafeDir(daemonDir()) !== null) return null;
  let conn: Deno.UnixConn;
  try {
    conn = await Deno.connect({ transport: "unix", path: socketPath() });
  } catch {
    return null;
  }
  let late = false;
  const timer = setTimeout(() => {
    late = true;
    conn.close();
  }, waitMs);
  try {
    await conn.write(new TextEncoder().encode(JSON.stringify(request) + "\n"));
    let text = "";
    for await (const chunk of conn.readable.pipeThrough(new TextDecoderStream())) {
      text += chunk;
      if (text.includes("\n")) break;
    }
    if (late) return LATE;
    const line = text.slice(0, text.indexOf("\n"));
    return line === "" ? null : JSON.parse(line);
  } catch {
    return late ? LATE : null;
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* closed already */ }
  }
}

/**
 * The daemon's answer to this dispatch call (`args`, its stdin `stdin`), or
 * null when it cannot give one (none runs: then one is started for the next
 * call; another environment; stdin too large). A daemon that has not
 * answered within the wait is given up: one line says so, and the call's
 * hooks end by `CALL_MS` after its start (`HOOKBOX_DAEMON_DEADLINE`).
 */
export async function viaDaemon(args: string[], stdin: string): Promise<DaemonAnswer | null> {
  if (stdin.length > MAX_DAEMON_STDIN) return null;
  const unsafe = unsafeDir(daemonDir());
  if (unsafe !== null && !unsafe.endsWith("does not exist")) {
    // Another user could stand in for the daemon there: this call runs in its own process.
    console.error(`hookbox: the daemon is not used: ${unsafe}`);
    return null;
  }
  if (Deno.env.get("HOOKBOX_DAEMON_DEADLINE")) {
    // dist/cli/hookbox gave up on the daemon for this call: it is not asked again, and a new
    // daemon takes the place of the one that did not answer.
    await startDaemon();
    return null;
  }
  const waitMs = daemonWaitMs();
  const answer = await ask({
    op: "dispatch",
    fingerprint: fingerprint(),
    args: args.filter((a) => a !== "--daemon"),
    cwd: Deno.cwd(),
    stdin,
  }, waitMs);
  if (answer === LATE) {
    console.error(
      `hookbox: the daemon did not answer within ${
        waitMs / 1000
      } s; this call runs in its own process`,
    );
    Deno.env.set("HOOKBOX_DAEMON_DEADLINE", String(Math.floor(performance.timeOrigin) + CALL_MS));
    await startDaemon();
    return null;
  }
  if (answer === null) {
    await startDaemon();
    return null;
  }
  if (typeof answer.exit !== "number") return null; // another environment: run here
  return {
    exit: answer.exit,
    stdout: String(answer.stdout ?? ""),
    stderr: String(answer.stderr ?? ""),
  };
}

/**
 * Starts `hookbox daemon` for this environment in the background, detached
 * from this call's pipes; when `MAX_DAEMONS` of other environments already
 * run, starts none and says so in one line.
 */
export async function startDaemon(): Promise<void> {
  if (await otherDaemons() >= MAX_DAEMONS) {
    console.error(
      `hookbox: the daemon is not started: ${MAX_DAEMONS} daemons of other environments ` +
        `(another HOME, PATH, XDG folder or HOOKBOX_* variable) run in ${daemonDir()}; ` +
        `this call runs in its own process (stop one with \`hookbox daemon stop\` in its environment)`,
    );
    return;
  }
  try {
    // The bundled CLI resolves everything itself; from source, the repository's deno.json does.
    const bundled = /\/dist\/cli\/[^/]+\.js$/.test(Deno.mainModule);
    const config = bundled
      ? ["--no-config"]
      : ["--config", new URL("../../deno.json", Deno.mainModule).pathname];
    // A call's own deadline is not the daemon's.
    const env = Deno.env.toObject();
    delete env.HOOKBOX_DAEMON_DEADLINE;
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", ...config, Deno.mainModule, "daemon"],
      clearEnv: true,
      env,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    child.unref();
  } catch {
    // Not started: every call runs in its own process, as without the daemon.
  }
}
