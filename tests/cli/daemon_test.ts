/**
 * `hookbox dispatch --agent NAME --daemon`: the first call answers in its own
 * process and starts the user's daemon; later calls are answered by it, the
 * same answers, with edits to the hooks seen at once; a call from another
 * environment, or with a folder others can enter, never goes through it.
 */
import assert from "node:assert/strict";
import { runCli } from "../_cli.ts";
import { eventually, killIfRunning, tempDir } from "../_helpers.ts";
import { pluginBytes, writePluginHook } from "../integration/_plugins.ts";
import { stopListening } from "../../packages/cli/daemon.ts";
import { environmentKey } from "../../packages/cli/daemon_client.ts";

const call = (command: string, cwd: string) =>
  JSON.stringify({
    session_id: "s",
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command },
    cwd,
  });

async function status(env: Record<string, string>, cwd: string) {
  const out = await runCli(["daemon", "status"], { cwd, env });
  return out.code === 0
    ? JSON.parse(out.stdout) as {
      pid: number;
      answered: number;
      running: number;
      running_ms: number | null;
    }
    : null;
}

/** The socket of the daemon for a process run with `env` (on top of this one's) in `run`. */
const socketIn = (run: string, env: Record<string, string>) =>
  `${run}/hookbox/daemon-${environmentKey({ ...Deno.env.toObject(), ...env })}.sock`;

/** A temporary root with a daemon folder of its own (`run`, mode 700), and the env that names it. */
async function daemonRoot(prefix: string) {
  const root = await tempDir(prefix);
  const run = `${root}/run`;
  await Deno.mkdir(run, { mode: 0o700 });
  return { root, run, env: { XDG_RUNTIME_DIR: run } };
}

/** `hookbox daemon` started from source in `env`, once it answers its status. */
async function startedDaemon(env: Record<string, string>, cwd: string, args: string[] = []) {
  const daemon = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      new URL("../../packages/cli/main.ts", import.meta.url).pathname,
      "daemon",
      "run",
      ...args,
    ],
    env,
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const seen = await eventually(() => status(env, cwd));
  assert.ok(seen !== null, "the daemon answers its status");
  return daemon;
}

Deno.test("dispatch --daemon: started on first use, then answering the same, edits seen at once", async () => {
  const { root, run, env: own } = await daemonRoot("hookbox-daemon-");
  const project = `${root}/project`;
  const hooks = `${project}/.agents/hooks`;
  await writePluginHook(hooks, "guard", await pluginBytes("guard_wasi"));
  const env = { ...own, XDG_CONFIG_HOME: `${root}/config` };
  const dispatch = (command: string, extra: Record<string, string> = {}) =>
    runCli(["dispatch", "--agent", "claude-code", "--daemon"], {
      cwd: project,
      env: { ...env, ...extra },
      stdin: call(command, project),
    });
  let pid: number | null = null;
  let otherPid: number | null = null;
  try {
    // First call: answered here; the daemon starts for the next one.
    const first = await dispatch("rm -rf /");
    assert.equal(first.code, 0, first.stderr);
    const denied = JSON.parse(first.stdout).hookSpecificOutput;
    assert.equal(denied.permissionDecision, "deny");
    const seen = await eventually(() => status(env, project));
    assert.ok(seen !== null, "the daemon answers its status");
    pid = seen.pid;
    assert.equal(seen.answered, 0);
    // Later calls: the daemon answers, as the process did.
    const second = await dispatch("rm -rf /");
    assert.deepEqual([second.code, second.stdout], [first.code, first.stdout]);
    const allowed = await dispatch("ls");
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.equal((await status(env, project))!.answered, 2);
    // The hook is removed: the next call through the daemon sees it gone.
    await Deno.remove(`${hooks}/guard`, { recursive: true });
    const after = await dispatch("rm -rf /");
    assert.equal(after.code, 0);
    assert.doesNotMatch(after.stdout, /deny/);
    assert.equal((await status(env, project))!.answered, 3);
    // Another environment (a variable hooks may read): never answered by this daemon, but by
    // one of its own, started on its first call.
    await writePluginHook(hooks, "guard", await pluginBytes("guard_wasi"));
    const greeting = { ...env, HOOKBOX_GREETING: "hi" };
    const elsewhere = await dispatch("rm -rf /", greeting);
    assert.match(elsewhere.stdout, /deny/);
    assert.equal((await status(env, project))!.answered, 3, "not through this daemon");
    const other = await eventually(() => status(greeting, project));
    assert.ok(other !== null && other.pid !== pid, "a daemon of its own answers its status");
    otherPid = other.pid;
    assert.match((await dispatch("rm -rf /", greeting)).stdout, /deny/);
    assert.equal((await status(greeting, project))!.answered, 1);
    assert.equal((await status(env, project))!.answered, 3);
    // A folder others can enter is never used: one line says so, the call is answered here.
    await Deno.chmod(`${run}/hookbox`, 0o755);
    const open = await dispatch("rm -rf /");
    assert.match(open.stdout, /deny/);
    assert.match(open.stderr, /the daemon is not used: .* is open to others \(mode 755\)/);
    await Deno.chmod(`${run}/hookbox`, 0o700);
    assert.equal((await status(env, project))!.answered, 3);
    // Stopped on request: its socket goes with it.
    const stop = await runCli(["daemon", "stop"], { cwd: project, env });
    assert.equal(stop.code, 0, stop.stderr);
    const socket = socketIn(run, env);
    for (let i = 0; i < 100; i++) {
      if ((await Deno.stat(socket).catch(() => null)) === null) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(await Deno.stat(socket).catch(() => null), null);
    pid = null;
    assert.ok(await Deno.stat(socketIn(run, greeting)), "the other environment's daemon runs on");
  } finally {
    killIfRunning(pid);
    killIfRunning(otherPid);
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("each environment gets a daemon of its own, up to four; a killed one's socket is cleared", async () => {
  const { root, run, env } = await daemonRoot("hookbox-daemon-many-");
  const project = `${root}/project`;
  await writePluginHook(`${project}/.agents/hooks`, "guard", await pluginBytes("guard_wasi"));
  const folder = `${run}/hookbox`;
  await Deno.mkdir(folder, { mode: 0o700 });
  // Four daemons of other environments answer (listeners standing in for them), and the socket of
  // one that was killed is left behind.
  const others = [1, 2, 3, 4].map((i) =>
    Deno.listen({ transport: "unix", path: `${folder}/daemon-${String(i).padStart(16, "0")}.sock` })
  );
  const stale = `${folder}/daemon-00000000000000ff.sock`;
  const killed = new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `Deno.listen({ transport: "unix", path: ${
        JSON.stringify(stale)
      } }); setInterval(() => {}, 1000);`,
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
  let pid: number | null = null;
  try {
    await eventually(() => Deno.lstat(stale).then(() => true, () => null));
    killed.kill("SIGKILL");
    await killed.status;
    const dispatch = () =>
      runCli(["dispatch", "--agent", "claude-code", "--daemon"], {
        cwd: project,
        env,
        stdin: call("rm -rf /", project),
      });
    const full = await dispatch();
    assert.match(full.stdout, /deny/);
    assert.match(
      full.stderr,
      /hookbox: the daemon is not started: 4 daemons of other environments .* run in .*; this call runs in its own process/,
    );
    await assert.rejects(Deno.lstat(stale), Deno.errors.NotFound, "the killed daemon's socket");
    assert.equal(await status(env, project), null, "no daemon started past four");
    // One of the others stops: the next call starts this environment's daemon.
    others.pop()!.close();
    const next = await dispatch();
    assert.match(next.stdout, /deny/);
    assert.doesNotMatch(next.stderr, /not started/);
    const seen = await eventually(() => status(env, project));
    assert.ok(seen !== null, "this environment's daemon answers");
    pid = seen.pid;
  } finally {
    killIfRunning(pid);
    for (const listener of others) listener.close();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("hookbox daemon stops itself after --idle seconds without a call, however often it is counted", async () => {
  const { root, run, env } = await daemonRoot("hookbox-daemon-");
  try {
    let ended = false;
    const running = runCli(["daemon", "run", "--idle", "1"], { cwd: root, env })
      .finally(() => ended = true);
    // Other environments' clients count the daemons by connecting and hanging up
    // (otherDaemons): that is no call, and keeps no daemon alive.
    let counted = 0;
    while (!ended && counted < 200) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const conn = await Deno.connect({ transport: "unix", path: socketIn(run, env) })
        .catch(() => null);
      if (conn !== null) conn.close(), counted++;
    }
    const daemon = await running;
    assert.ok(counted > 0 && counted < 200, `counted ${counted} times`);
    assert.equal(daemon.code, 0, daemon.stderr);
    assert.equal(await Deno.stat(socketIn(run, env)).catch(() => null), null);
    const none = await runCli(["daemon", "status"], { cwd: root, env });
    assert.equal(none.code, 1);
    assert.match(none.stderr, /hookbox daemon: none answers at .*daemon-[0-9a-f]{16}\.sock/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("install writes the command form that calls through the daemon, unless --no-daemon", async () => {
  const project = await tempDir("hookbox-daemon-install-");
  try {
    await Deno.mkdir(`${project}/.git`);
    const settings = () => Deno.readTextFile(`${project}/.claude/settings.json`);
    const install = (...extra: string[]) =>
      runCli(["install", "--agent", "claude-code", "--project", project, ...extra], {
        cwd: project,
      });
    const made = await install();
    assert.equal(made.code, 0, made.stderr);
    assert.match(await settings(), /hookbox dispatch --agent claude-code[^"]* --daemon"/);
    const explicit = await install("--daemon");
    assert.equal(explicit.code, 0, explicit.stderr);
    assert.match(await settings(), /hookbox dispatch --agent claude-code[^"]* --daemon"/);
    const own = await install("--no-daemon");
    assert.equal(own.code, 0, own.stderr);
    assert.doesNotMatch(await settings(), /--daemon/);
    const both = await install("--daemon", "--no-daemon");
    assert.equal(both.code, 1);
    assert.match(both.stderr, /--daemon and --no-daemon contradict each other/);
    const http = await install("--daemon", "--http", "http://x");
    assert.equal(http.code, 1);
    assert.match(http.stderr, /--daemon and --no-daemon are for installing the command form only/);
    // HTTP hooks have no daemon: installed without one.
    const plain = await install("--http", "http://127.0.0.1:9/");
    assert.equal(plain.code, 0, plain.stderr);
    assert.doesNotMatch(await settings(), /--daemon/);
  } finally {
    await Deno.remove(project, { recursive: true });
  }
});

Deno.test("HOOKBOX_DAEMON=0 keeps a --daemon call in its own process; a daemon whose socket goes stops", async () => {
  const { root, run, env } = await daemonRoot("hookbox-daemon-off-");
  const project = `${root}/project`;
  await writePluginHook(`${project}/.agents/hooks`, "guard", await pluginBytes("guard_wasi"));
  try {
    const off = await runCli(["dispatch", "--agent", "claude-code", "--daemon"], {
      cwd: project,
      env: { ...env, HOOKBOX_DAEMON: "0" },
      stdin: call("rm -rf /", project),
    });
    assert.match(off.stdout, /deny/);
    assert.equal(await status(env, project), null, "no daemon was started");
    // A daemon whose socket is removed stops by itself, within seconds.
    const daemon = await startedDaemon(env, project);
    await Deno.remove(`${run}/hookbox`, { recursive: true });
    const ended = await daemon.output();
    assert.equal(ended.code, 0, new TextDecoder().decode(ended.stderr));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a daemon whose place another took stops and leaves the newcomer's socket alone", async () => {
  const { root, run, env } = await daemonRoot("hookbox-daemon-replaced-");
  const project = `${root}/project`;
  await writePluginHook(`${project}/.agents/hooks`, "guard", await pluginBytes("guard_wasi"));
  const socket = socketIn(run, env);
  const first = await startedDaemon(env, project);
  const newcomer = Deno.listen({ transport: "unix", path: `${run}/hookbox/new.sock` });
  try {
    // Another takes the path at once (as a daemon does when the first did not answer in time).
    await Deno.rename(`${run}/hookbox/new.sock`, socket);
    const taken = Deno.lstatSync(socket).ino;
    // The first sees its socket replaced and stops.
    const ended = await first.output();
    assert.equal(ended.code, 0, new TextDecoder().decode(ended.stderr));
    assert.equal(Deno.lstatSync(socket).ino, taken, "the newcomer's socket is where it was");
  } finally {
    newcomer.close();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("stopListening() never takes a path another listener has taken", async () => {
  const dir = await tempDir("hookbox-daemon-listen-");
  const path = `${dir}/daemon.sock`;
  const old = Deno.listen({ transport: "unix", path });
  const newcomer = Deno.listen({ transport: "unix", path: `${dir}/new.sock` });
  try {
    await Deno.rename(`${dir}/new.sock`, path);
    // Deno removes a Unix listener's path when it drops a closed one, whoever's socket it is.
    stopListening(old, false);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.ok(await Deno.lstat(path).then(() => true, () => false), "the newcomer's path is there");
    const conn = await Deno.connect({ transport: "unix", path });
    conn.close();
    const accepted = await newcomer.accept();
    accepted.close();
  } finally {
    await Deno.remove(path).catch(() => {});
    try {
      old.close();
    } catch { /* closed by stopListening */ }
    newcomer.close();
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * A daemon (run with `args`) answering a long call of one project (12 hooks that each loop to the
 * policy's most fuel, about 2 s each: the call runs to the event's 15 s deadline) when a quick
 * call of another project arrives, whose guard denies its command: the daemon's status just after
 * the quick call, and once the long one ended.
 */
Deno.test("one project's hooks that never finish building leave the other projects' building time alone", async () => {
  // Source of the attack: a repository's JS hooks whose top levels never end spent the
  // daemon's 12 s of building, and every other project's hooks were "not built" for a minute
  // after (a guard that fails open then let everything through).
  const { root, env: own } = await daemonRoot("hookbox-daemon-build-time-");
  const env = {
    ...own,
    XDG_CACHE_HOME: `${root}/cache`,
    XDG_CONFIG_HOME: `${root}/config`,
    // The hostile project's call builds for 12 s: on a loaded machine, near the client's wait.
    HOOKBOX_DAEMON_WAIT_MS: "60000",
  };
  const js = async (project: string, name: string, source: string) => {
    const dir = `${root}/${project}/.agents/hooks/${name}`;
    await Deno.mkdir(`${dir}/scripts`, { recursive: true });
    await Deno.writeTextFile(
      `${dir}/HOOK.md`,
      `---\nname: ${name}\ndescription: test hook\ntrigger: pre-tool-call\n---\n`,
    );
    await Deno.writeTextFile(`${dir}/scripts/run.mjs`, source);
  };
  for (let i = 0; i < 3; i++) {
    await js(
      "hostile",
      `loop${i}`,
      `let n = ${i};\nwhile (true) n++;\nexport default function () {}\n`,
    );
  }
  await js(
    "good",
    "guard",
    'export default function (e) {\n  if (/rm -rf/.test(e.tool_input?.command ?? "")) ' +
      'return { decision: "block", reason: "no rm -rf" };\n}\n',
  );
  const daemon = await startedDaemon(env, root);
  try {
    const dispatch = (project: string, command: string) =>
      runCli(["dispatch", "--agent", "claude-code", "--daemon"], {
        cwd: `${root}/${project}`,
        env,
        stdin: call(command, `${root}/${project}`),
      });
    const hostile = await dispatch("hostile", "ls");
    assert.match(hostile.stdout, /not built: this process('s| has spent its) 12000 ms/);
    const good = await dispatch("good", "rm -rf /");
    assert.equal(
      JSON.parse(good.stdout).hookSpecificOutput?.permissionDecision,
      "deny",
      good.stdout,
    );
    assert.equal((await status(env, root))!.answered, 2, "both through the daemon");
  } finally {
    killIfRunning(daemon.pid);
    await daemon.output();
    await Deno.remove(root, { recursive: true });
  }
});

async function quickBesideLong(prefix: string, args: string[]) {
  const { root, env: own } = await daemonRoot(prefix);
  // The long call takes the event's 15 s: on a loaded machine, past the client's 18 s wait.
  const env = { ...own, HOOKBOX_DAEMON_WAIT_MS: "60000" };
  const slow = `${root}/slow`;
  const quick = `${root}/quick`;
  const spin = await pluginBytes("loop_forever");
  for (let i = 0; i < 12; i++) {
    await writePluginHook(`${slow}/.agents/hooks`, `slow-${i}`, spin, {
      timeout: 30_000,
      limits: { fuel: 1e10 },
    });
  }
  await writePluginHook(`${quick}/.agents/hooks`, "guard", await pluginBytes("guard_wasi"));
  const daemon = await startedDaemon(env, root, args);
  try {
    const dispatch = (cwd: string, command: string) =>
      runCli(["dispatch", "--agent", "claude-code", "--daemon"], {
        cwd,
        env,
        stdin: call(command, cwd),
      });
    let longEnded = false;
    const long = dispatch(slow, "ls").finally(() => longEnded = true);
    // Until the daemon is seen running it, or it has ended: on a machine loaded enough, no
    // status may be answered while it runs, or its client may run it in its own process (then
    // nothing overlaps that this test can see).
    const running = await eventually(async () =>
      longEnded ? false : (await status(env, root))?.running_ms ?? null
    );
    assert.ok(running !== null, "the daemon runs the long call, or the call ends");
    // Each call sees its own stdin and folder: the quick project's guard blocks its command.
    const denied = await dispatch(quick, "rm -rf /");
    assert.match(denied.stdout, /deny/);
    const seen = await status(env, root);
    // The long call runs the event's 15 s; a machine so loaded that a one-shot CLI takes longer
    // to start and answer leaves no overlap to look at (the calls then came one after another),
    // and so does a status the daemon did not answer in time while it ran.
    const overlapped = running !== false && !longEnded && seen !== null && seen.running === 1;
    assert.equal((await long).code, 0);
    const after = await eventually(() => status(env, root));
    assert.ok(after !== null, "the daemon answers its status once the long call has ended");
    return {
      // Looked at only where the calls overlapped, so seen then.
      during: seen ?? after,
      after,
      overlapped,
      longInDaemon: running !== false,
    };
  } finally {
    killIfRunning(daemon.pid);
    await daemon.output();
    await Deno.remove(root, { recursive: true });
  }
}

Deno.test("a call the daemon has no turn for, behind long ones, runs in its own process", async () => {
  const { during, after, overlapped, longInDaemon } = await quickBesideLong(
    "hookbox-daemon-busy-",
    ["--calls", "1"],
  );
  if (overlapped) {
    assert.notEqual(during.running_ms, null, "answered while the long call still runs");
    assert.equal(during.answered, 0, "not by the daemon");
    assert.equal(after.answered, 1);
  } else {
    // One after the other: the quick call by the daemon, or in its own process if it came
    // while the long one was ending.
    assert.ok(after.answered >= (longInDaemon ? 1 : 0) && after.answered <= 2, `${after.answered}`);
  }
});

Deno.test("the daemon answers a quick call while another session's long one runs", async () => {
  const { during, after, overlapped, longInDaemon } = await quickBesideLong(
    "hookbox-daemon-calls-",
    [],
  );
  if (overlapped) assert.equal(during.answered, 1, "answered by the daemon, beside the long one");
  // Both by the daemon. A long call never seen running (the machine so loaded that no status
  // was answered while it ran) may have run in its own process.
  if (longInDaemon) assert.equal(after.answered, 2);
  else assert.ok([1, 2].includes(after.answered), `answered ${after.answered}`);
});

Deno.test("a daemon that can accept no more (out of file descriptors) stops and takes its socket with it", async () => {
  const { root, env } = await daemonRoot("hookbox-daemon-files-");
  // util-linux's prlimit: the daemon's file descriptors capped.
  const daemon = new Deno.Command("prlimit", {
    args: [
      "--nofile=128:128",
      Deno.execPath(),
      "run",
      "-A",
      new URL("../../packages/cli/main.ts", import.meta.url).pathname,
      "daemon",
      "run",
      "--idle",
      "3600",
    ],
    env,
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(daemon.stderr).text();
  const held: Deno.UnixConn[] = [];
  try {
    assert.ok((await eventually(() => status(env, root))) !== null, "the daemon answers");
    const socket = JSON.parse((await runCli(["daemon", "status"], { cwd: root, env })).stdout)
      .socket as string;
    // Connections that send nothing, held until the daemon cannot accept another.
    for (let i = 0; i < 400; i++) {
      try {
        held.push(await Deno.connect({ transport: "unix", path: socket }));
      } catch {
        break;
      }
    }
    // Callers waited out their answer time on a socket nobody accepted on; now it is gone.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ended = await Promise.race([
      daemon.status,
      new Promise<null>((resolve) => timer = setTimeout(() => resolve(null), 60_000)),
    ]);
    clearTimeout(timer);
    assert.ok(ended !== null, "the daemon still runs, accepting nothing");
    assert.equal(ended.code, 0);
    assert.match(await stderr, /hookbox daemon: stopping: accepting failed: .*Too many open files/);
    await assert.rejects(Deno.lstat(socket), Deno.errors.NotFound);
  } finally {
    for (const conn of held) conn.close();
    killIfRunning(daemon.pid);
  }
});
