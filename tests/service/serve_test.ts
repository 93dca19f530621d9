/**
 * `hookbox serve` as a real process: the listening line, the admin key, a
 * graceful SIGTERM that flushes the audit, and two processes on one
 * PostgreSQL acting as one service.
 */
import assert from "node:assert/strict";
import { freshDatabase } from "../_pg.ts";
import { hookMd, toolEvent, wasmFolder } from "./_api.ts";
import { earlyInMinute, tempDir } from "../_helpers.ts";

const CLI = new URL("../../packages/cli/main.ts", import.meta.url).pathname;
const ADMIN = "serve-test-admin-key-0123456789";

interface Proc {
  url: string;
  child: Deno.ChildProcess;
  stderr: () => string;
  call(
    method: string,
    path: string,
    key: string | null,
    body?: unknown,
    // deno-lint-ignore no-explicit-any -- answers are read field by field
  ): Promise<{ status: number; body: any }>;
  stop(): Promise<Deno.CommandStatus>;
}

/** `serve` arguments for a SQLite store in `dir`, no plugin workers, no warm-up. */
const coldSqlite = (dir: string) => [
  "--db",
  `sqlite:${dir}/hookbox.db`,
  "--workers",
  "0",
  "--warm-up",
  "0",
];

async function serve(
  args: string[],
  env: Record<string, string> = { HOOKBOX_ADMIN_KEY: ADMIN },
  { closeStderr = false, stderrRead = Promise.resolve(), fileLimit = 0 } = {},
): Promise<Proc> {
  const command = ["run", "-A", CLI, "serve", "--port", "0", ...args];
  // util-linux's prlimit: the process's file descriptors capped (Deno raises its soft limit to the hard one).
  const child = new Deno.Command(fileLimit > 0 ? "prlimit" : Deno.execPath(), {
    args: fileLimit > 0
      ? [`--nofile=${fileLimit}:${fileLimit}`, Deno.execPath(), ...command]
      : command,
    env,
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let text = "";
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line: ${text}`)), 30_000);
    (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return reject(new Error(`exited: ${text}`));
        text += value;
        const match = /listening on (http:\/\/\S+)/.exec(text);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]!);
          // The reader goes away: later writes to stderr meet a broken pipe.
          if (closeStderr) return void reader.cancel();
          // keep draining so the pipe never fills (once `stderrRead` lets it)
          (async () => {
            await stderrRead;
            for (;;) {
              const more = await reader.read();
              if (more.done) return;
              text += more.value;
            }
          })();
          return;
        }
      }
    })();
  });
  return {
    url,
    child,
    stderr: () => text,
    async call(method, path, key, body) {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: key ? { authorization: `Bearer ${key}` } : {},
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const t = await res.text();
      return { status: res.status, body: t ? JSON.parse(t) : null };
    },
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      return await child.status;
    },
  };
}

Deno.test("hookbox serve: listens, serves, and on SIGTERM exits 0 with every answered event audited", async () => {
  const dir = await tempDir("hookbox-serve-");
  const db = `sqlite:${dir}/hookbox.db`;
  const server = await serve(["--db", db, "--workers", "1"]);
  let key = "";
  try {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal((await server.call("GET", "/healthz", null)).body.status, "ok");
    await server.call("POST", "/v1/tenants", ADMIN, { id: "acme" });
    key = (await server.call("POST", "/v1/tenants/acme/keys", ADMIN, {})).body.key;
    const up = await server.call(
      "PUT",
      "/v1/hooks/guard",
      key,
      await wasmFolder("guard", "guard_wasi"),
    );
    assert.equal(up.status, 201);
    const answers = await Promise.all(
      Array.from(
        { length: 20 },
        () => server.call("POST", "/v1/events", key, toolEvent("rm -rf /")),
      ),
    );
    assert.ok(answers.every((a) => a.status === 200 && a.body.decision === "block"));
  } finally {
    const status = await server.stop();
    assert.equal(status.code, 0, server.stderr());
  }
  assert.match(server.stderr(), /"msg":"request"/, "structured request logs");
  const lines = server.stderr().split("\n").filter((l) => l.startsWith("{")).map((l) =>
    JSON.parse(l)
  );
  // Lifecycle, in order: what it runs with, ready, draining, stopped.
  const life = lines.filter((l) => ["starting", "ready", "draining", "stopped"].includes(l.msg));
  assert.deepEqual(life.map((l) => l.msg), ["starting", "ready", "draining", "stopped"]);
  assert.equal(life[0].store, "sqlite");
  assert.equal(life[0].workers, 1);
  assert.equal(life[0].admin_key, "given");
  // Each request line names its decision (events) or its error code.
  const events = lines.filter((l) => l.msg === "request" && l.path === "/v1/events");
  assert.equal(events.length, 20);
  assert.ok(events.every((l) => /^dec_/.test(l.decision_id)), JSON.stringify(events[0]));
  // It warmed up before it listened, on a store of its own.
  const warmUp = server.stderr().split("\n").find((line) => line.includes('"msg":"warm-up"'));
  assert.ok(warmUp, server.stderr());
  assert.equal(JSON.parse(warmUp).failed, 0);
  assert.ok(server.stderr().indexOf(warmUp) < server.stderr().indexOf("listening on"));
  // The store holds what was answered: reopen it in a new process (cold this time).
  const again = await serve(["--db", db, "--workers", "0", "--warm-up", "0"]);
  try {
    const audit = await again.call("GET", "/v1/audit?limit=100", key);
    assert.equal(audit.body.items.length, 20);
    const tenants = await again.call("GET", "/v1/tenants", ADMIN);
    assert.deepEqual(tenants.body.items.map((t: { id: string }) => t.id), ["acme"]);
  } finally {
    await again.stop();
  }
  assert.doesNotMatch(again.stderr(), /warm-up/);
});

Deno.test("GET /metrics shows what the plugin workers hold: workers, warm instances, kept plugins", async () => {
  const dir = await tempDir("hookbox-serve-");
  const server = await serve(["--db", `sqlite:${dir}/hookbox.db`, "--workers", "2"]);
  const runtimeFigures = async () => {
    const text = await fetch(`${server.url}/metrics`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    }).then((r) => r.text());
    const figures: Record<string, number> = {};
    for (const m of text.matchAll(/^hookbox_runtime_([a-z_]+) (\d+)$/gm)) {
      figures[m[1]!] = Number(m[2]);
    }
    return figures;
  };
  try {
    await server.call("POST", "/v1/tenants", ADMIN, { id: "acme" });
    const key = (await server.call("POST", "/v1/tenants/acme/keys", ADMIN, {})).body.key;
    const up = await server.call(
      "PUT",
      "/v1/hooks/guard",
      key,
      await wasmFolder("guard", "guard_wasi", "isolation: warm\n"),
    );
    assert.equal(up.status, 201, JSON.stringify(up.body));
    for (let i = 0; i < 4; i++) {
      assert.equal(
        (await server.call("POST", "/v1/events", key, toolEvent("rm -rf /"))).body.decision,
        "block",
      );
    }
    // Workers report after their jobs, within a second of the last: wait for the report, and for
    // the jobs the upload started (the new version prepared on each worker) to end.
    let figures: Record<string, number> = {};
    for (let i = 0; i < 300; i++) {
      figures = await runtimeFigures();
      if ((figures.warm_instances ?? 0) >= 1 && figures.running_calls === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(figures.workers, 2, JSON.stringify(figures));
    assert.equal(figures.running_calls, 0, JSON.stringify(figures));
    assert.equal(figures.queued_calls, 0, JSON.stringify(figures));
    assert.ok(figures.warm_instances! >= 1, JSON.stringify(figures));
    assert.ok(figures.warm_idle_bytes! > 0, JSON.stringify(figures));
    assert.ok(figures.kept_plugins! >= 1, JSON.stringify(figures));
    assert.ok(figures.kept_plugin_bytes! > 0, JSON.stringify(figures));
    assert.ok(figures.loaded_plugin_bytes! >= figures.kept_plugin_bytes!, JSON.stringify(figures));
  } finally {
    await server.stop();
  }
});

Deno.test("hookbox serve refuses a --warm-up that is not a count of events", async () => {
  for (const bad of ["-1", "1.5", "lots", "100001"]) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", CLI, "serve", "--port", "0", `--warm-up=${bad}`],
      env: { HOOKBOX_ADMIN_KEY: ADMIN },
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 1, bad);
    assert.match(new TextDecoder().decode(out.stderr), /--warm-up must be 0-100000 events/);
  }
});

Deno.test("hookbox serve without HOOKBOX_ADMIN_KEY keeps one admin key next to its database", async () => {
  const dir = await tempDir("hookbox-serve-");
  const env = { HOME: dir, PATH: Deno.env.get("PATH") ?? "" };
  const args = ["--db", `sqlite:${dir}/hookbox.db`, "--workers", "0", "--warm-up", "0"];
  const first = await serve(args, env);
  let key = "";
  try {
    // Printed once, before the listening line serve() waited for, with where it is kept.
    const match = /generated admin key \(shown once, kept in (\S+)\): (\S+)/.exec(first.stderr());
    assert.ok(match, first.stderr());
    assert.equal(match[1], `${dir}/hookbox.db.admin-key`);
    key = match[2]!;
    assert.equal((await Deno.stat(match[1]!)).mode! & 0o777, 0o600);
    assert.equal((await first.call("GET", "/v1/tenants", key)).status, 200);
    assert.equal((await first.call("GET", "/v1/tenants", "wrong")).status, 401);
  } finally {
    await first.stop();
  }
  // A restart reads the same key and prints none.
  const second = await serve(args, env);
  try {
    assert.doesNotMatch(second.stderr(), /generated admin key/);
    assert.equal((await second.call("GET", "/v1/tenants", key)).status, 200);
  } finally {
    await second.stop();
  }
});

Deno.test("hookbox serve takes its options from flags, then HOOKBOX_* variables, then --config", async () => {
  const dir = await tempDir("hookbox-serve-");
  const config = `${dir}/serve.json`;
  await Deno.writeTextFile(
    config,
    JSON.stringify({ db: `sqlite:${dir}/from-config.db`, workers: 2, "warm-up": 0 }),
  );
  const server = await serve(["--config", config], {
    HOOKBOX_ADMIN_KEY: ADMIN,
    HOOKBOX_WORKERS: "0",
    PATH: Deno.env.get("PATH") ?? "",
    HOME: dir,
  });
  try {
    assert.equal((await server.call("GET", "/healthz", null)).status, 200);
  } finally {
    await server.stop();
  }
  const starting = server.stderr().split("\n").find((l) => l.includes('"msg":"starting"'))!;
  const line = JSON.parse(starting);
  assert.equal(line.db, `sqlite:${dir}/from-config.db`, "from the config file");
  assert.equal(line.workers, 0, "HOOKBOX_WORKERS wins over the config file");
  assert.equal(line.warm_up, 0);
  // What the config file cannot say is refused by name.
  for (
    const [text, message] of [
      [JSON.stringify({ prot: 1 }), /config: unknown option prot/],
      [JSON.stringify({ workers: [1] }), /config: "workers" must be a string or number/],
      ["[1]", /not a JSON object/],
    ] as const
  ) {
    await Deno.writeTextFile(config, text);
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", CLI, "serve", "--config", config],
      env: { HOOKBOX_ADMIN_KEY: ADMIN, HOME: dir },
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 1, text);
    assert.match(new TextDecoder().decode(out.stderr), message);
  }
});

Deno.test("two hookbox serve processes on one PostgreSQL act as one service", async () => {
  const db = await freshDatabase();
  // The quota window is the clock minute: start well inside one.
  await earlyInMinute(45);
  const a = await serve(["--db", db, "--workers", "1"]);
  const b = await serve(["--db", db, "--workers", "1"]);
  try {
    await a.call("POST", "/v1/tenants", ADMIN, { id: "acme", policy: { events_per_minute: 6 } });
    const key = (await b.call("POST", "/v1/tenants/acme/keys", ADMIN, {})).body.key;
    // Uploaded through A, served by B on its next event.
    assert.equal(
      (await a.call("PUT", "/v1/hooks/guard", key, await wasmFolder("guard", "guard_wasi"))).status,
      201,
    );
    assert.equal(
      (await b.call("POST", "/v1/events", key, toolEvent("rm -rf /"))).body.decision,
      "block",
    );
    // A new version through B, rolled back through A: both serve what is active.
    await b.call("PUT", "/v1/hooks/guard", key, await wasmFolder("guard", "rewrite_wasi"));
    assert.equal(
      (await a.call("POST", "/v1/events", key, toolEvent("rm -rf /"))).body.decision,
      "allow",
    );
    await a.call("POST", "/v1/hooks/guard/rollback", key, { version: 1 });
    assert.equal(
      (await b.call("POST", "/v1/events", key, toolEvent("rm -rf /"))).body.decision,
      "block",
    );
    // Quotas count across processes: 3 events so far, 3 more allowed in this minute.
    const statuses = [];
    for (const p of [a, b, a, b]) {
      statuses.push((await p.call("POST", "/v1/events", key, toolEvent("ls"))).status);
    }
    assert.deepEqual(statuses, [200, 200, 200, 429], "the minute's quota is shared");
    // A key revoked through A stops working on B at once.
    const second = (await a.call("POST", "/v1/tenants/acme/keys", ADMIN, {})).body;
    assert.equal((await b.call("GET", "/v1/hooks", second.key)).status, 200);
    assert.equal((await a.call("DELETE", `/v1/tenants/acme/keys/${second.id}`, ADMIN)).status, 204);
    assert.equal((await b.call("GET", "/v1/hooks", second.key)).status, 401);
    // Every answered event has its audit row, whichever process answered.
    const audit = await a.call("GET", "/v1/audit?limit=100", key);
    assert.equal(audit.body.items.length, 6);
  } finally {
    assert.equal((await a.stop()).code, 0);
    assert.equal((await b.stop()).code, 0);
  }
});

Deno.test("an uploaded prompt hook injects its body through the service", async () => {
  const dir = await tempDir("hookbox-serve-");
  const server = await serve(["--db", `sqlite:${dir}/hookbox.db`, "--workers", "0"]);
  try {
    await server.call("POST", "/v1/tenants", ADMIN, { id: "acme" });
    const key = (await server.call("POST", "/v1/tenants/acme/keys", ADMIN, {})).body.key;
    const md = hookMd("remind", "inject:\n  role: system\n").replace("---\n\n", "---\n") +
      "Always run the tests.";
    const up = await server.call("PUT", "/v1/hooks/remind", key, { files: { "HOOK.md": md } });
    assert.deepEqual([up.status, up.body.runtime], [201, "prompt"], JSON.stringify(up.body));
    const res = await server.call("POST", "/v1/events", key, toolEvent("ls"));
    assert.equal(res.body.inject[0]?.content, "Always run the tests.");
  } finally {
    await server.stop();
  }
});

Deno.test("hookbox serve keeps answering when its stderr reader goes away, and counts the lost log lines", async () => {
  const dir = await tempDir("hookbox-serve-");
  const server = await serve(
    ["--db", `sqlite:${dir}/hookbox.db`, "--workers", "0"],
    undefined,
    { closeStderr: true },
  );
  try {
    // Each API request logs a line (probes such as /healthz do not); the batch is written within 50 ms and meets the broken pipe.
    const dropped = async () =>
      Number(
        /^hookbox_log_lines_dropped_total (\d+)/m.exec(
          await (await fetch(`${server.url}/metrics`, {
            headers: { authorization: `Bearer ${ADMIN}` },
          })).text(),
        )?.[1] ?? 0,
      );
    const deadline = Date.now() + 20_000;
    while (await dropped() === 0 && Date.now() < deadline) {
      assert.equal((await server.call("GET", "/v1/tenants", ADMIN)).status, 200);
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(await dropped() > 0, "log lines were written to a closed pipe and counted");
    for (let i = 0; i < 5; i++) {
      assert.equal((await server.call("GET", "/v1/tenants", ADMIN)).status, 200);
    }
  } finally {
    const status = await server.stop();
    assert.equal(status.code, 0, "the process was still running and shut down cleanly");
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("hookbox serve keeps answering while nobody reads its stderr, and its log comes out once read", async () => {
  const dir = await tempDir("hookbox-serve-");
  let read = () => {};
  const server = await serve(
    ["--db", `sqlite:${dir}/hookbox.db`, "--workers", "0"],
    undefined,
    { stderrRead: new Promise<void>((resolve) => read = resolve) },
  );
  try {
    // Each API request logs a line of ~250 bytes: 2,000 are several times what a pipe holds
    // (64 KiB), and a server writing to it synchronously would stop answering.
    for (let i = 0; i < 2000; i += 50) {
      const answers = await Promise.all(Array.from({ length: 50 }, async () => {
        // Bounded: a server stopped in a write answers nothing, and the test fails, not hangs.
        const res = await fetch(`${server.url}/v1/tenants`, {
          headers: { authorization: `Bearer ${ADMIN}` },
          signal: AbortSignal.timeout(30_000),
        });
        await res.body?.cancel();
        return res.status;
      }));
      assert.ok(answers.every((status) => status === 200));
    }
  } finally {
    read();
    const status = await server.stop();
    assert.equal(status.code, 0, "the process shut down cleanly");
    await Deno.remove(dir, { recursive: true });
  }
  const lines = server.stderr().split("\n").filter((l) => l.startsWith("{")).map((l) =>
    JSON.parse(l)
  );
  assert.equal(lines.filter((l) => l.msg === "request" && l.path === "/v1/tenants").length, 2000);
  assert.equal(lines.at(-1).msg, "stopped", "every line, to the last, written before it exited");
});

Deno.test("a client that never finishes its request body cannot hold hookbox serve's shutdown: it exits after --shutdown-grace", async () => {
  const dir = await tempDir("hookbox-serve-");
  const db = `sqlite:${dir}/hookbox.db`;
  const server = await serve(["--db", db, "--workers", "0", "--shutdown-grace", "1"]);
  const port = Number(new URL(server.url).port);
  const stalled: Deno.TcpConn[] = [];
  try {
    await server.call("POST", "/v1/tenants", ADMIN, { id: "acme" });
    const key = (await server.call("POST", "/v1/tenants/acme/keys", ADMIN, {})).body.key;
    // Two hostile connections: an anonymous one (its 401 comes before the body
    // is read) and a tenant's event, each declaring 100 bytes and sending 7.
    for (const auth of ["nope", key]) {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      stalled.push(conn);
      await conn.write(new TextEncoder().encode(
        `POST /v1/events HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${auth}\r\n` +
          `content-type: application/json\r\ncontent-length: 100\r\n\r\n{"id":1`,
      ));
    }
    // The server has the tenant's request in hand once its own 401 arrived on the first.
    const first = new Uint8Array(64);
    await stalled[0]!.read(first);
    assert.match(new TextDecoder().decode(first), /^HTTP\/1\.1 401/);
  } finally {
    server.child.kill("SIGTERM");
    // Without the grace period the process never exits: the test would hang here.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const status = await Promise.race([
      server.child.status,
      new Promise<null>((resolve) => timer = setTimeout(() => resolve(null), 60_000)),
    ]);
    clearTimeout(timer);
    for (const conn of stalled) conn.close();
    if (status === null) {
      server.child.kill("SIGKILL");
      await server.child.status;
    }
    assert.ok(status !== null, `hookbox serve did not exit on SIGTERM: ${server.stderr()}`);
    assert.equal(status.code, 0, server.stderr());
  }
  assert.match(server.stderr(), /requests still open after 1000 ms are cut off/);
});

Deno.test("a tenant's connections that declare big bodies and send little hold memory for what arrived, not what they declared", async () => {
  const dir = await tempDir("hookbox-serve-");
  const server = await serve(["--db", `sqlite:${dir}/hookbox.db`, "--workers", "0"]);
  const port = Number(new URL(server.url).port);
  const CONNECTIONS = 200;
  const DECLARED = 1_000_000; // under the 1 MiB cap of an event
  const stalled: Deno.TcpConn[] = [];
  const rss = () => {
    const status = Deno.readTextFileSync(`/proc/${server.child.pid}/status`);
    return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
  };
  try {
    await server.call("POST", "/v1/tenants", ADMIN, { id: "acme" });
    // Every request takes a lease before its body is read: the one past them is refused.
    await server.call("PUT", "/v1/tenants/acme/policy", ADMIN, { max_concurrent: CONNECTIONS });
    const key = (await server.call("POST", "/v1/tenants/acme/keys", ADMIN, {})).body.key;
    const before = rss();
    for (let i = 0; i < CONNECTIONS; i++) {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      stalled.push(conn);
      await conn.write(new TextEncoder().encode(
        `POST /v1/events HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\n` +
          `content-type: application/json\r\ncontent-length: ${DECLARED}\r\n\r\n{"id":1`,
      ));
    }
    // Once an event is refused for max_concurrent, every stalled body is being read.
    for (let refused = false; !refused;) {
      const answer = await server.call("POST", "/v1/events", key, toolEvent("ls"));
      refused = answer.status === 429;
    }
    let most = 0;
    for (let i = 0; i < 10; i++) {
      most = Math.max(most, rss() - before);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // Reading a declared body into a buffer of its declared size took ~1 MB a connection.
    assert.ok(
      most < (CONNECTIONS * DECLARED) / 3,
      `${CONNECTIONS} bodies of 7 bytes grew the server by ${(most / 2 ** 20).toFixed(0)} MiB`,
    );
  } finally {
    for (const conn of stalled) conn.close();
    await server.stop();
  }
});

Deno.test("hookbox serve --held-mb bounds what one tenant's requests hold: a body past it is refused with 429", async () => {
  const db = `sqlite:${await tempDir("hookbox-serve-")}/hookbox.db`;
  const server = await serve(["--db", db, "--workers", "0", "--held-mb", "1"]);
  const port = Number(new URL(server.url).port);
  let conn: Deno.TcpConn | undefined;
  try {
    await server.call("POST", "/v1/tenants", ADMIN, { id: "acme" });
    const key = (await server.call("POST", "/v1/tenants/acme/keys", ADMIN, {})).body.key;
    // 900 KB of an event declared just under the 1 MiB cap, then nothing: its buffer reaches
    // 1 MiB, so it is refused at once (with the default 64 MiB it would wait for the rest until
    // the body deadline).
    conn = await Deno.connect({ hostname: "127.0.0.1", port });
    await conn.write(new TextEncoder().encode(
      `POST /v1/events HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\n` +
        `content-type: application/json\r\ncontent-length: 1048000\r\n\r\n`,
    ));
    conn.write(new Uint8Array(900_000).fill(0x20)).catch(() => {});
    const head = new Uint8Array(512);
    const n = await conn.read(head);
    const answer = new TextDecoder().decode(head.subarray(0, n ?? 0));
    assert.match(answer, /^HTTP\/1\.1 429/);
    assert.match(answer, /retry-after: 1/i);
  } finally {
    conn?.close();
    await server.stop();
  }
  const bad = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "serve", "--port", "0", "--held-mb", "0"],
    env: { HOOKBOX_ADMIN_KEY: ADMIN },
    stderr: "piped",
    stdout: "null",
  }).output();
  assert.equal(bad.code, 1);
  assert.match(new TextDecoder().decode(bad.stderr), /--held-mb must be 1-1048576 MiB, got 0/);
});

Deno.test("hookbox serve on PostgreSQL without an admin key refuses to start, saying why", async () => {
  const db = await freshDatabase();
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "serve", "--port", "0", "--db", db, "--warm-up", "0"],
    env: { PATH: Deno.env.get("PATH") ?? "", HOME: await tempDir("hookbox-test-") },
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 1);
  assert.match(
    new TextDecoder().decode(out.stderr),
    /OPTION_INVALID: a PostgreSQL store is shared by instances that must share one admin key/,
  );
});

Deno.test("hookbox serve --decision-log appends each decision with its hooks' stderr and the event", async () => {
  const dir = await tempDir("hookbox-serve-");
  const logFile = `${dir}/decisions.jsonl`;
  const server = await serve([
    ...coldSqlite(dir),
    "--decision-log",
    logFile,
    "--decision-log-events",
  ]);
  let answer: { decision_id: string } | null = null;
  try {
    await server.call("POST", "/v1/tenants", ADMIN, { id: "acme" });
    const key = (await server.call("POST", "/v1/tenants/acme/keys", ADMIN, {})).body.key;
    await server.call("PUT", "/v1/hooks/guard", key, await wasmFolder("guard", "guard_wasi"));
    answer = (await server.call("POST", "/v1/events", key, toolEvent("rm -rf /"))).body;
    // A tenant whose capture redacts a key has it redacted in the decision log too.
    await server.call("POST", "/v1/tenants", ADMIN, {
      id: "quiet",
      policy: { capture: { redact: ["command"] } },
    });
    const quiet = (await server.call("POST", "/v1/tenants/quiet/keys", ADMIN, {})).body.key;
    await server.call("POST", "/v1/events", quiet, toolEvent("cat ~/.secret"));
  } finally {
    assert.equal((await server.stop()).code, 0);
  }
  const lines = (await Deno.readTextFile(logFile)).trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(lines.length, 2);
  const [entry, redacted] = lines;
  assert.deepEqual([redacted.tenant_id, redacted.event.tool_input.command], [
    "quiet",
    "[redacted]",
  ]);
  assert.equal(entry.decision_id, answer!.decision_id);
  assert.deepEqual([entry.tenant_id, entry.decision, entry.blocked_by], ["acme", "block", "guard"]);
  assert.equal(entry.hooks[0].stderr, "rm -rf is not allowed");
  assert.equal(entry.hooks[0].version, 1);
  assert.equal(entry.event.tool_input.command, "rm -rf /");
  assert.equal((await Deno.stat(logFile)).mode! & 0o777, 0o600);
});

Deno.test("hookbox serve keeps answering while its --decision-log pipe is not read, and writes every line once it is", async () => {
  const dir = await tempDir("hookbox-serve-");
  const fifo = `${dir}/decisions.fifo`;
  const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  assert.ok(made.success, "mkfifo");
  // The server's open of the pipe waits for a reader: this one, which reads nothing yet.
  const reader = Deno.open(fifo, { read: true });
  const server = await serve([...coldSqlite(dir), "--decision-log", fifo, "--decision-log-events"]);
  const pipe = await reader;
  let read: Promise<string> | null = null;
  try {
    await server.call("POST", "/v1/tenants", ADMIN, { id: "acme" });
    const key = (await server.call("POST", "/v1/tenants/acme/keys", ADMIN, {})).body.key;
    // 300 decisions of ~1.3 KB each: several times what a pipe holds (64 KiB).
    for (let i = 0; i < 300; i += 50) {
      const statuses = await Promise.all(Array.from({ length: 50 }, async () => {
        // Bounded: a server stopped in a write answers nothing, and the test fails, not hangs.
        const res = await fetch(`${server.url}/v1/events`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}` },
          body: JSON.stringify(toolEvent(`echo ${"z".repeat(1000)}`)),
          signal: AbortSignal.timeout(30_000),
        });
        await res.body?.cancel();
        return res.status;
      }));
      assert.ok(statuses.every((status) => status === 200), String(statuses));
    }
    read = new Response(pipe.readable).text();
  } finally {
    read ??= new Response(pipe.readable).text();
    assert.equal((await server.stop()).code, 0);
  }
  const lines = (await read).trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(lines.length, 300, "every decision, once the pipe was read");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("hookbox serve --decision-log URL posts each decision to a collector, with its token", async () => {
  const dir = await tempDir("hookbox-serve-");
  const received: { auth: string | null; lines: Record<string, unknown>[] }[] = [];
  const collector = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const lines = (await req.text()).trim().split("\n").map((l) => JSON.parse(l));
      received.push({ auth: req.headers.get("authorization"), lines });
      return new Response(null, { status: 204 });
    },
  );
  const server = await serve(
    [...coldSqlite(dir), "--decision-log", `http://127.0.0.1:${collector.addr.port}/decisions`],
    { HOOKBOX_ADMIN_KEY: ADMIN, HOOKBOX_DECISION_LOG_TOKEN: "collector-token" },
  );
  let answer: { decision_id: string } | null = null;
  try {
    await server.call("POST", "/v1/tenants", ADMIN, { id: "acme" });
    const key = (await server.call("POST", "/v1/tenants/acme/keys", ADMIN, {})).body.key;
    answer = (await server.call("POST", "/v1/events", key, toolEvent("ls"))).body;
  } finally {
    // Stopping sends what is queued.
    assert.equal((await server.stop()).code, 0);
    await collector.shutdown();
  }
  const lines = received.flatMap((r) => r.lines);
  assert.deepEqual(lines.map((l) => [l.decision_id, l.tenant_id]), [[answer!.decision_id, "acme"]]);
  assert.deepEqual(received.map((r) => r.auth), ["Bearer collector-token"]);
});

/** Sends one request on a kept connection; the answer's status and body text. */
async function exchange(
  conn: Deno.TcpConn,
  method: string,
  path: string,
  key: string,
  body = "",
): Promise<{ status: number; body: string }> {
  const payload = new TextEncoder().encode(body);
  await conn.write(new TextEncoder().encode(
    `${method} ${path} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\n` +
      `content-type: application/json\r\ncontent-length: ${payload.byteLength}\r\n\r\n`,
  ));
  await conn.write(payload);
  let text = "";
  const chunk = new Uint8Array(64 * 1024);
  for (;;) {
    const head = text.indexOf("\r\n\r\n");
    if (head >= 0) {
      const length = Number(/content-length: (\d+)/i.exec(text.slice(0, head))?.[1] ?? 0);
      if (new TextEncoder().encode(text.slice(head + 4)).byteLength >= length) {
        return { status: Number(text.slice(9, 12)), body: text.slice(head + 4) };
      }
    }
    const n = await conn.read(chunk);
    if (n === null) throw new Error(`connection closed: ${text}`);
    text += new TextDecoder().decode(chunk.subarray(0, n));
  }
}

Deno.test("a client that holds connections until hookbox serve is out of file descriptors cannot stop it", async () => {
  const dir = await tempDir("hookbox-serve-");
  const server = await serve(coldSqlite(dir), undefined, { fileLimit: 256 });
  const port = Number(new URL(server.url).port);
  const flood: Deno.TcpConn[] = [];
  const kept: Deno.TcpConn[] = [];
  try {
    await server.call("POST", "/v1/tenants", ADMIN, { id: "acme" });
    const key = (await server.call("POST", "/v1/tenants/acme/keys", ADMIN, {})).body.key;
    const event = JSON.stringify(toolEvent("ls"));
    const open = await Deno.connect({ hostname: "127.0.0.1", port });
    kept.push(open);
    assert.equal((await exchange(open, "POST", "/v1/events", key, event)).status, 200);
    // Connections held open, until the server can accept no more (its accept fails).
    for (let i = 0; i < 1000; i++) {
      try {
        flood.push(await Deno.connect({ hostname: "127.0.0.1", port }));
      } catch {
        break;
      }
    }
    let ended: Deno.CommandStatus | null = null;
    server.child.status.then((status) => ended = status);
    while (!server.stderr().includes('"msg":"accept"')) {
      if (ended !== null) assert.fail(`the server ended: ${server.stderr()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.match(
      server.stderr(),
      /"msg":"accept","error":"[^"]*Too many open files[^"]*accepting again/,
    );
    // The connections it has are still served; what needs a file is a 503 to retry, never a 500.
    const served = await exchange(open, "POST", "/v1/events", key, event).catch((err) =>
      assert.fail(`${err}; the server said: ${server.stderr().slice(-3000)}`)
    );
    assert.equal(served.status, 200);
    const upload = await exchange(
      open,
      "PUT",
      "/v1/hooks/guard",
      key,
      JSON.stringify(await wasmFolder("guard", "guard_wasi")),
    ).catch(async (err) => {
      await new Promise((r) => setTimeout(r, 1000));
      assert.fail(`${err}; the server said: ${server.stderr().slice(-3000)}`);
    });
    assert.ok([201, 503].includes(upload.status), `upload: ${upload.status} ${upload.body}`);
    if (upload.status === 503) assert.equal(JSON.parse(upload.body).error.code, "OUT_OF_FILES");
    // Once those connections close, new ones are accepted again: the process never ended.
    for (const conn of flood.splice(0)) conn.close();
    for (;;) {
      try {
        const conn = await Deno.connect({ hostname: "127.0.0.1", port });
        kept.push(conn);
        const answer = await exchange(conn, "POST", "/v1/events", key, event);
        assert.equal(answer.status, 200, answer.body);
        break;
      } catch (err) {
        if (err instanceof assert.AssertionError) throw err;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    const status = await server.stop();
    assert.equal(status.code, 0, server.stderr());
  } finally {
    for (const conn of [...flood, ...kept]) {
      try {
        conn.close();
      } catch { /* closed */ }
    }
    await server.stop();
  }
});
