/**
 * Builds a hook call had no building time for go on in a process of their
 * own. A call stops building once its building time is spent (12 s), and a
 * one-shot call kills what it still builds when it exits: on a machine busy
 * enough that a first build takes longer, every call started the build again
 * and stopped it again, and the hook never ran. `HOOKBOX_BUILD_MS=0` makes
 * every call such a call, without depending on the machine's speed.
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { runCli } from "../_cli.ts";
import { eventually, killIfRunning, ROOT, tempDir } from "../_helpers.ts";
import { holderGone } from "../../packages/compile/_js_lock.ts";

const EVENT = JSON.stringify({
  event_type: "pre-tool-call",
  tool_name: "Bash",
  tool_input: { command: "ls" },
  session_id: "s",
});

interface HookRecord {
  name: string;
  outcome: string;
  detail: string | null;
}

/** A project with JS hooks `name → [frontmatter lines, script]`, and its cache and config. */
async function project(hooks: Record<string, [string, string]>, cacheOf?: string) {
  const dir = await tempDir("hookbox-build-later-");
  const cache = cacheOf ?? `${dir}/cache`;
  for (const [name, [manifest, script]] of Object.entries(hooks)) {
    const hook = `${dir}/.agents/hooks/${name}`;
    await Deno.mkdir(`${hook}/scripts`, { recursive: true });
    await Deno.writeTextFile(
      `${hook}/HOOK.md`,
      `---\nname: ${name}\ndescription: a test hook\ntrigger: pre-tool-call\n${manifest}---\n`,
    );
    await Deno.writeTextFile(`${hook}/scripts/run.mjs`, script);
  }
  const env: Record<string, string> = {
    HOOKBOX_CACHE_DIR: cache,
    HOOKBOX_BUILD_MS: "0",
    XDG_CONFIG_HOME: `${dir}/config`,
  };
  const dispatch = async () => {
    const run = await runCli(["dispatch", "--work-dir", dir], { cwd: dir, env, stdin: EVENT });
    const result = JSON.parse(run.stdout);
    return { result, stderr: run.stderr, hooks: result.hooks as HookRecord[] };
  };
  return { dir, cache, env, dispatch, building: () => locksIn(cache) };
}

/** The handed-over builds under way for the cache folder `cache` (their lock files). */
async function locksIn(cache: string): Promise<string[]> {
  const locks: string[] = [];
  try {
    for await (const entry of Deno.readDir(`${cache}/build-later`)) {
      if (entry.name.endsWith(".lock")) locks.push(entry.name);
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return locks;
}

/** Waits for the builds under way for `building` to end. */
const ended = (building: () => Promise<string[]>) =>
  eventually(async () => (await building()).length === 0 ? true : null, 120, 1000);
const blocks = (reason: string) =>
  `export default () => ({ decision: "block", reason: "${reason}" });\n`;

Deno.test("a hook a call had no time to build is built in the background and runs on a later call", async () => {
  const { dir, dispatch } = await project({
    other: ["priority: 200\n", blocks("the other says no")],
    guard: ["on_error: closed\npriority: 100\n", blocks("the guard says no")],
  });
  try {
    // The first call builds nothing itself: one build (the hook run first) is handed over, the
    // other waits for it to end, and the closed guard, not built, blocks.
    const first = await dispatch();
    assertEquals(first.result.decision, "block");
    const [other, guard] = first.hooks;
    assertEquals([other?.name, other?.outcome, guard?.outcome], ["other", "error", "error"]);
    match(
      other?.detail ?? "",
      /not built: this process builds nothing itself .*; it is being built in the background/,
    );
    match(
      guard?.detail ?? "",
      /a later call builds it, or build it once with `hookbox compile .*guard`/,
    );
    match(first.stderr, /hook "guard" failed .*hookbox compile .* and is on_error: closed/);
    // Later calls find the builds done, one after the other, and run both hooks.
    const built = await eventually(
      async () => {
        const call = await dispatch();
        return call.hooks.every((h) => h.outcome === "block") ? call : null;
      },
      120,
      1000,
    );
    ok(built, "both hooks were built in the background");
    assertEquals(built.result.reason, "the other says no");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a handed-over build outlives the agent killing its hook command's process group", async () => {
  const { dir, env, dispatch, building } = await project({
    guard: ["", blocks("the guard says no")],
  });
  let leader: number | null = null;
  try {
    // As an agent runs a hook command: a process group of its own, killed once it answered (or
    // timed out). Here the group lives on past the answer until it is killed.
    await Deno.writeTextFile(`${dir}/event.json`, EVENT);
    const cli = `${Deno.execPath()} run -A ${ROOT}/packages/cli/main.ts dispatch --work-dir ${dir}`;
    const child = new Deno.Command("/usr/bin/setsid", {
      args: ["/bin/sh", "-c", `${cli} < event.json > answer.json 2>/dev/null; sleep 600`],
      cwd: dir,
      env,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    leader = child.pid;
    const answer = await eventually(
      async () => {
        const text = await Deno.readTextFile(`${dir}/answer.json`).catch(() => "");
        try {
          return JSON.parse(text);
        } catch {
          return null;
        }
      },
      600,
      200,
    );
    match(answer?.hooks?.[0]?.detail ?? "", /being built in the background/);
    Deno.kill(-leader, "SIGKILL");
    await child.status;
    leader = null;
    // The build was not in that group: it ends, the lock goes, and the next call runs the hook.
    ok(await ended(building), "built");
    const later = await dispatch();
    assertEquals(later.result.reason, "the guard says no");
  } finally {
    if (leader !== null) killIfRunning(-leader);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a one-shot call's build its event's deadline cut off goes on for a later call", async () => {
  // A top level that takes seconds of CPU time to build (25 million turns of a loop: about 3 s
  // of a 10 s limit), so a deadline 1.5 s after the call starts passes while it builds.
  const slow = "let x = 0;\nfor (let i = 0; i < 25000000; i++) x += i;\n" +
    'export default () => ({ decision: "block", reason: "built " + (x > 0) });\n';
  const { dir, env, building } = await project({ guard: ["", slow] });
  try {
    // The call has its building time, but its hooks' deadline passes (as when the daemon was
    // late, or hooks before it took their time): the hook ends as a timeout mid-build, and the
    // process exits, which kills the build. A call that started too late to begin the build
    // (a loaded machine) is made again.
    let hook: HookRecord | undefined;
    for (let attempt = 0; attempt < 5; attempt++) {
      const late = await runCli(["dispatch", "--work-dir", dir], {
        cwd: dir,
        env: {
          ...env,
          HOOKBOX_BUILD_MS: "12000",
          HOOKBOX_DAEMON_DEADLINE: String(Date.now() + 1500),
        },
        stdin: EVENT,
      });
      hook = JSON.parse(late.stdout).hooks[0];
      if (!/budget is spent/.test(hook?.detail ?? "")) break;
    }
    assertEquals(hook?.outcome, "timeout", JSON.stringify(hook));
    match(
      hook?.detail ?? "",
      /ran out while the hook was being built; a later call uses the build/,
    );
    // A later call that builds nothing itself finds the build done.
    ok(await ended(building), "ended");
    const later = await runCli(["dispatch", "--work-dir", dir], { cwd: dir, env, stdin: EVENT });
    assertEquals(JSON.parse(later.stdout).reason, "built true", later.stdout);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a hook whose top level never ends is built in the background once, and its failure kept", async () => {
  const { dir, dispatch, building } = await project({
    spin: ["", "for (;;) {}\nexport default () => {};\n"],
  });
  try {
    const first = await dispatch();
    match(first.hooks[0]?.detail ?? "", /being built in the background/);
    // The background build ends at its CPU limit, and that failure is recorded: later calls
    // answer with it at once and hand nothing over.
    ok(await ended(building), "ended");
    const later = await dispatch();
    match(
      later.hooks[0]?.detail ?? "",
      /did not finish building in 10000 ms of CPU time.*as when these sources were last built/,
    );
    assertEquals(await building(), [], "no build was handed over again");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** SIGKILLs every process of session `sid` (a handed-over build's: its shell leads it). */
async function killSession(sid: number): Promise<void> {
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const stat = await Deno.readTextFile(`/proc/${entry.name}/stat`).catch(() => "");
    // After the command name: state, parent, process group, session.
    const session = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[3]);
    if (session === sid) killIfRunning(Number(entry.name));
  }
}

Deno.test("a handed-over build killed with its shell is handed over again by the next call", async () => {
  // A top level that never ends: its build runs to its CPU limit (10 s), long enough to kill.
  const { dir, cache, dispatch, building } = await project({
    spin: ["", "for (;;) {}\nexport default () => {};\n"],
  });
  const builds: number[] = [];
  const lockOf = async () => {
    const [name] = await building();
    return name === undefined ? "" : await Deno.readTextFile(`${cache}/build-later/${name}`);
  };
  try {
    const first = await dispatch();
    match(first.hooks[0]?.detail ?? "", /being built in the background/);
    const lock = await lockOf();
    builds.push(Number(lock.split("\n")[0]));
    assertEquals(holderGone(lock), false, "the lock names the build, running");
    // The machine kills the build, its shell with it: the lock stays behind.
    await killSession(builds[0]!);
    ok(await eventually(() => Promise.resolve(holderGone(lock) ? true : null), 100, 100), "killed");
    assertEquals((await building()).length, 1);
    // The next call sees the build gone and hands it over again, not after minutes.
    const again = await dispatch();
    match(again.hooks[0]?.detail ?? "", /being built in the background/);
    const relock = await lockOf();
    builds.push(Number(relock.split("\n")[0]));
    ok(builds[1] !== builds[0] && holderGone(relock) === false, relock);
  } finally {
    for (const sid of builds) await killSession(sid);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a repository's hook that holds its background build keeps no other folder's hooks from theirs", async () => {
  // The repository's hook keeps its build busy for its 10 s of CPU time; the other project's
  // hooks (another hooks folder: as the user's or the platform's would be) share the cache.
  const hostile = await project({ spin: ["", "for (;;) {}\nexport default () => {};\n"] });
  const other = await project({ guard: ["", blocks("the guard says no")] }, hostile.cache);
  try {
    match((await hostile.dispatch()).hooks[0]?.detail ?? "", /being built in the background/);
    const first = await other.dispatch();
    assertEquals((await hostile.building()).length >= 1, true, "the spinning build is under way");
    match(first.hooks[0]?.detail ?? "", /being built in the background/);
    const built = await eventually(
      async () => (await other.dispatch()).result.reason === "the guard says no" ? true : null,
      120,
      1000,
    );
    ok(built, "the other folder's hook was built while the spinning one still was");
    ok(await ended(hostile.building), "ended");
  } finally {
    await Deno.remove(hostile.dir, { recursive: true });
    await Deno.remove(other.dir, { recursive: true });
  }
});

Deno.test("handed-over builds under way at once are capped per cache folder", async () => {
  const { dir, cache, dispatch } = await project({ guard: ["", blocks("the guard says no")] });
  try {
    // Builds of three other hooks folders under way (their lock files, as a build writes them).
    await Deno.mkdir(`${cache}/build-later`, { recursive: true });
    const others = ["a", "b", "c"].map((name) => `${cache}/build-later/${name}.lock`);
    for (const lock of others) await Deno.writeTextFile(lock, "1");
    const refused = await dispatch();
    match(refused.hooks[0]?.detail ?? "", /a later call builds it, or build it once with/);
    // Locks older than a build can run are left by builds that ended without removing them.
    const past = new Date(Date.now() - 3_600_000);
    for (const lock of others) await Deno.utime(lock, past, past);
    const taken = await dispatch();
    match(taken.hooks[0]?.detail ?? "", /being built in the background/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an edit to any file of a hook hands its build over again", async () => {
  const { dir, dispatch, building } = await project({
    guard: [
      "",
      'import { why } from "./lib.mjs";\nexport default () => ({ decision: "block", reason: why });\n',
    ],
  });
  const lib = `${dir}/.agents/hooks/guard/scripts/lib.mjs`;
  try {
    await Deno.writeTextFile(lib, "for (;;) {}\nexport const why = 'never';\n");
    match((await dispatch()).hooks[0]?.detail ?? "", /being built in the background/);
    ok(await ended(building), "ended");
    match((await dispatch()).hooks[0]?.detail ?? "", /did not finish building in 10000 ms/);
    // The entry is the same; the file it imports is not.
    await Deno.writeTextFile(lib, "export const why = 'mended';\n");
    match((await dispatch()).hooks[0]?.detail ?? "", /being built in the background/);
    const built = await eventually(
      async () => (await dispatch()).result.reason === "mended" ? true : null,
      120,
      1000,
    );
    ok(built, "the mended hook was built in the background");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a call with no building time never builds the JS engine itself", async () => {
  const { dir, env, dispatch, building } = await project({
    guard: ["on_error: closed\n", blocks("the guard says no")],
  });
  try {
    // A clang of another name and time stamp (it runs the real one): the engine's stamp, keyed
    // by the compiler's file, does not hold for it, as after an update of clang or of the
    // engine's sources. Each run is written down with the command line of what ran it.
    const real = (Deno.env.get("PATH") ?? "").split(":").map((d) => `${d}/clang`).find((p) => {
      try {
        return Deno.statSync(p).isFile;
      } catch {
        return false;
      }
    });
    ok(real, "clang on PATH");
    const bin = `${dir}/bin`;
    await Deno.mkdir(bin);
    await Deno.writeTextFile(
      `${bin}/clang`,
      `#!/bin/sh\ntr '\\0' ' ' < /proc/$PPID/cmdline >> ${dir}/clang-runs\necho >> ${dir}/clang-runs\n` +
        `exec ${real} "$@"\n`,
      { mode: 0o755 },
    );
    env.PATH = `${bin}:${Deno.env.get("PATH")}`;
    // The engine is part of the hook's build: a call with no building time hands it over with
    // the hook's, and never starts clang (which held a call, and the engine's lock, as long as
    // the engine took to build).
    const first = await dispatch();
    assertEquals(first.result.decision, "block");
    match(first.hooks[0]?.detail ?? "", /not built: .*it is being built in the background/);
    const built = await eventually(
      async () => (await dispatch()).hooks[0]?.outcome === "block" ? true : null,
      120,
      1000,
    );
    ok(built, "the hook and the engine were built in the background");
    const runs = (await Deno.readTextFile(`${dir}/clang-runs`)).trim().split("\n");
    ok(runs.length > 0 && runs.every((line) => / compile /.test(line)), runs.join("\n"));
    ok(await ended(building), "ended");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
