/**
 * `hookbox serve --processes 2`: two processes on one port and one store
 * answer together; quotas hold across them, every answered event is audited
 * once, a process that dies is started again, and SIGTERM stops them all.
 */
import assert from "node:assert/strict";
import { earlyInMinute, ROOT, tempDir, toolEvent } from "../_helpers.ts";
import { call } from "../../scripts/_serve_process.ts";

const ADMIN = "processes-test-admin-key-0123456789";

async function serveProcesses(db: string, stderrRead: Promise<void> = Promise.resolve()) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      `${ROOT}/packages/cli/main.ts`,
      "serve",
      "--processes",
      "2",
      "--port",
      "0",
      "--db",
      db,
      "--warm-up",
      "0",
    ],
    env: { HOOKBOX_ADMIN_KEY: ADMIN },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let text = "";
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let ready!: (url: string) => void;
  const listening = new Promise<string>((resolve) => ready = resolve);
  const drained = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      text += value;
      const match = /listening on (http:\/\/\S+)/.exec(text);
      if (match) {
        ready(match[1]!);
        await stderrRead; // not read on until then
      }
    }
  })();
  const url = await Promise.race([
    listening,
    child.status.then((s) => Promise.reject(new Error(`exited ${s.code}: ${text}`))),
  ]);
  return {
    url,
    pid: child.pid,
    /** The JSON log lines so far. */
    lines: () =>
      text.split("\n").filter((l) => l.startsWith("{")).map((l) =>
        JSON.parse(l) as Record<
          string,
          unknown
        >
      ),
    async stop() {
      child.kill("SIGTERM");
      const status = await child.status;
      await drained;
      return status.code;
    },
  };
}

/** An event on a connection of its own (so the kernel picks a process for each). */
async function event(url: string, key: string, command: string) {
  // A client of its own: a new connection, so the kernel picks a process for each
  // (fetch drops a `Connection: close` header and reuses its pool's connections).
  using client = Deno.createHttpClient({});
  const res = await fetch(`${url}/v1/events`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body: JSON.stringify(toolEvent({ tool_input: { command } })),
    client,
  });
  return { status: res.status, body: await res.json() };
}

Deno.test("serve --processes 2: both answer on one port; quotas exact, audit once each, SIGTERM stops all", async () => {
  const dir = await tempDir("hookbox-processes-");
  const server = await serveProcesses(`sqlite:${dir}/hookbox.db`);
  try {
    const made = await call(server.url, "POST", "/v1/tenants", ADMIN, {
      id: "acme",
      policy: { events_per_minute: 60 },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const key = (await call(server.url, "POST", "/v1/tenants/acme/keys", ADMIN, {})).body.key;
    // 80 events, 8 at a time, each on a new connection: 60 are admitted, whichever process, all
    // in one clock minute (a CI run that crossed into the next admitted 64).
    await earlyInMinute();
    const answers: { status: number; body: { decision_id?: string } }[] = [];
    for (let round = 0; round < 10; round++) {
      answers.push(
        ...await Promise.all(
          Array.from({ length: 8 }, (_, i) => event(server.url, key, `ls ${i}`)),
        ),
      );
    }
    const ok = answers.filter((a) => a.status === 200);
    assert.equal(ok.length, 60, `admitted ${ok.length} of 80 under events_per_minute 60`);
    assert.ok(answers.every((a) => a.status === 200 || a.status === 429));
    // Both processes take connections. The kernel picks a process per connection by a
    // hash, and a few rounds of connections sometimes all hash to one: new connections
    // until both have answered (each has a one-in-two chance), within a bound no fair
    // spread misses.
    const served = () =>
      new Set(server.lines().filter((l) => l.msg === "request").map((l) => l.process));
    for (let i = 0; i < 200 && served().size < 2; i++) {
      using client = Deno.createHttpClient({});
      await (await fetch(`${server.url}/healthz`, { client })).body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, 5)); // its log line comes through
    }
    assert.deepEqual([...served()].sort(), [0, 1], "connections were spread over both processes");
  } finally {
    assert.equal(await server.stop(), 0, "SIGTERM: every process drained and exited 0");
  }
  // Every answered decision has exactly one audit row (read after the stop, from the file).
  const again = await serveProcesses(`sqlite:${dir}/hookbox.db`);
  try {
    const key = (await call(again.url, "POST", "/v1/tenants/acme/keys", ADMIN, {})).body.key;
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { items: { decision_id: string }[]; next_cursor: string | null } } =
        await call(
          again.url,
          "GET",
          `/v1/audit?limit=1000${cursor ? `&cursor=${cursor}` : ""}`,
          key,
        );
      ids.push(...page.body.items.map((i) => i.decision_id));
      cursor = page.body.next_cursor;
    } while (cursor !== null);
    assert.equal(ids.length, 60);
    assert.equal(new Set(ids).size, 60);
  } finally {
    assert.equal(await again.stop(), 0);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("serve --processes 2: a process that dies is started again and the port keeps answering", async () => {
  const dir = await tempDir("hookbox-processes-");
  const server = await serveProcesses(`sqlite:${dir}/hookbox.db`);
  try {
    const pids = new Set(
      server.lines().filter((l) => l.msg === "starting").map((l) => Number(l.pid)),
    );
    assert.equal(pids.size, 2, JSON.stringify(server.lines()));
    const victim = [...pids][0]!;
    Deno.kill(victim, "SIGKILL");
    // Started again: a third `starting` line, from a new pid, for the same process index.
    for (let i = 0; i < 200; i++) {
      if (server.lines().filter((l) => l.msg === "ready").length >= 3) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const restarted = server.lines().filter((l) => l.msg === "process exited; starting it again");
    assert.equal(restarted.length, 1);
    assert.equal(server.lines().filter((l) => l.msg === "ready").length, 3);
    for (let i = 0; i < 10; i++) {
      const health = await fetch(`${server.url}/healthz`, { headers: { connection: "close" } });
      assert.equal(health.status, 200);
      await health.body?.cancel();
    }
  } finally {
    assert.equal(await server.stop(), 0);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("serve --processes 2: a process that cannot be started again is tried again, the supervisor stays", async () => {
  const dir = await tempDir("hookbox-processes-");
  const server = await serveProcesses(`sqlite:${dir}/hookbox.db`);
  let stopped = false;
  // The soft limit only: the hard one stays, so it can be raised again.
  const limit = async (soft: number | "hard") => {
    const pid = String(server.pid);
    const hard = new TextDecoder().decode(
      (await new Deno.Command("prlimit", {
        args: ["--pid", pid, "--nofile", "--output", "HARD", "--noheadings"],
      }).output()).stdout,
    ).trim();
    return await new Deno.Command("prlimit", {
      args: ["--pid", pid, `--nofile=${soft === "hard" ? hard : soft}:${hard}`],
    }).output();
  };
  try {
    const pids = new Set(
      server.lines().filter((l) => l.msg === "starting").map((l) => Number(l.pid)),
    );
    assert.equal(pids.size, 2, JSON.stringify(server.lines()));
    // The supervisor out of file descriptors: no number below its limit is free.
    const open = new Set(
      [...Deno.readDirSync(`/proc/${server.pid}/fd`)].map((e) => Number(e.name)),
    );
    let free = 0;
    while (open.has(free)) free++;
    assert.ok((await limit(free)).success);
    Deno.kill([...pids][0]!, "SIGKILL");
    const said = (msg: string) => server.lines().filter((l) => l.msg === msg).length;
    for (let i = 0; i < 200 && said("process could not be started again; trying again") < 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.ok(said("process could not be started again; trying again") >= 2, "tried, and again");
    assert.ok(Deno.statSync(`/proc/${server.pid}`).isDirectory, "the supervisor is still there");
    // Descriptors again: the process is started, and both answer.
    assert.ok((await limit("hard")).success);
    for (let i = 0; i < 200 && said("ready") < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(said("ready"), 3);
    const health = await fetch(`${server.url}/healthz`, { headers: { connection: "close" } });
    assert.equal(health.status, 200);
    await health.body?.cancel();
    stopped = true;
    assert.equal(await server.stop(), 0);
  } finally {
    await limit("hard");
    if (!stopped) await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("serve --processes 2: when the supervisor is killed, its processes stop too", async () => {
  // Source of the fault: the supervisor killed with kill -9 (or by the OOM killer). Its
  // processes served on unsupervised, and beside those of a supervisor started again.
  const dir = await tempDir("hookbox-processes-");
  const server = await serveProcesses(`sqlite:${dir}/hookbox.db`);
  const pids = server.lines().filter((l) => l.msg === "starting").map((l) => Number(l.pid));
  try {
    assert.equal(pids.length, 2, JSON.stringify(server.lines()));
    Deno.kill(server.pid, "SIGKILL");
    const running = () =>
      pids.filter((pid) => {
        try {
          return !/\) Z /.test(Deno.readTextFileSync(`/proc/${pid}/stat`));
        } catch {
          return false;
        }
      });
    for (let i = 0; i < 300 && running().length > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.deepEqual(running(), [], "processes still serving without their supervisor");
  } finally {
    for (const pid of pids) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch { /* stopped, as they should */ }
    }
    await server.stop().catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});

/** 2,000 API requests of ~250 bytes of log each: several times what a pipe holds. */
async function manyLoggedRequests(url: string) {
  for (let i = 0; i < 2000; i += 50) {
    const statuses = await Promise.all(Array.from({ length: 50 }, async () => {
      // Bounded: a server stopped in a write answers nothing, and the test fails, not hangs.
      const res = await fetch(`${url}/v1/tenants`, {
        headers: { authorization: `Bearer ${ADMIN}` },
        signal: AbortSignal.timeout(30_000),
      });
      await res.body?.cancel();
      return res.status;
    }));
    assert.ok(statuses.every((status) => status === 200), String(statuses));
  }
}

/** `serve --processes 2` on a store of its own whose stderr is not read until `read()`. */
async function unreadServer() {
  const dir = await tempDir("hookbox-processes-");
  let read = () => {};
  const server = await serveProcesses(
    `sqlite:${dir}/hookbox.db`,
    new Promise<void>((resolve) => read = resolve),
  );
  return { dir, server, read: () => read() };
}

Deno.test("serve --processes keeps answering while nobody reads its stderr, and every line comes out once read", async () => {
  const { dir, server, read } = await unreadServer();
  try {
    await manyLoggedRequests(server.url);
  } finally {
    read();
    assert.equal(await server.stop(), 0);
    await Deno.remove(dir, { recursive: true });
  }
  const requests = server.lines().filter((l) => l.msg === "request" && l.path === "/v1/tenants");
  assert.equal(requests.length, 2000);
});

Deno.test("serve --processes starts a dead process again while nobody reads its stderr", async () => {
  const { dir, server, read } = await unreadServer();
  try {
    await manyLoggedRequests(server.url);
    // The supervisor's own stderr is full now: it must not be stuck in a write.
    const pids = new Set(
      server.lines().filter((l) => l.msg === "starting").map((l) => Number(l.pid)),
    );
    assert.equal(pids.size, 2);
    Deno.kill([...pids][0]!, "SIGKILL");
    const children = () =>
      Deno.readTextFileSync(`/proc/${server.pid}/task/${server.pid}/children`).trim().split(/\s+/)
        .filter((p) => p !== "").map(Number);
    let fresh: number[] = [];
    for (let i = 0; i < 300 && fresh.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      fresh = children().filter((pid) => !pids.has(pid));
    }
    assert.equal(fresh.length, 1, "a new process in the place of the dead one");
    read();
    for (let i = 0; i < 300; i++) {
      if (server.lines().filter((l) => l.msg === "ready").length >= 3) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    read();
    assert.equal(await server.stop(), 0);
    await Deno.remove(dir, { recursive: true });
  }
});
