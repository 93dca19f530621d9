/**
 * Service behaviour beyond the route table, on the embedded store: no audit
 * no answer, group commit, retention, tar uploads, JS compilation at upload,
 * and two services on one store acting as one.
 */
import assert from "node:assert/strict";
import { RawHttpConnection } from "../../scripts/_raw_http.ts";
import { startServe } from "../../scripts/_serve_process.ts";
import { ROOT, tempDir } from "../_helpers.ts";
import { Validator } from "@seriousme/openapi-schema-validator";
import { CLIENT_ERROR_LINES } from "../../packages/service/log_lines.ts";
import { openSqliteStore } from "../../packages/store-sqlite/sqlite.ts";
import { pluginBytes } from "../integration/_plugins.ts";
import { encodeBase64 } from "../_base64.ts";
import { type Harness, harness, hookMd, toolEvent, wasmFolder } from "./_api.ts";
import { AUDIT_SCAN_ROWS, type StorageLimits } from "../../packages/service/app.ts";
import { createDenoHookBuilder } from "../../packages/deno/serve/hook_builder.ts";
import { HookRejected } from "../../packages/service/builder.ts";
import { createTar } from "nanotar";
import { unpackArchive } from "../../packages/service/archive.ts";
import type { ApiError } from "../../packages/service/errors.ts";
import { StoreUnavailable } from "../../packages/store/store.ts";

/** The files of a hook `hookbox init guard` writes: HOOK.md, the script and one case. */
async function initGuard(): Promise<Record<string, string>> {
  const dir = await tempDir("hookbox-init-");
  const init = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}/packages/cli/main.ts`, "init", "guard", "--dir", dir],
    stdout: "null",
    stderr: "null",
  }).output();
  assert.equal(init.code, 0);
  const files: Record<string, string> = {};
  for (const path of ["HOOK.md", "scripts/run.mjs", "tests/blocks-force-push.json"]) {
    files[path] = await Deno.readTextFile(`${dir}/guard/${path}`);
  }
  return files;
}

async function sqlitePath(): Promise<string> {
  return `${await tempDir("hookbox-svc-")}/hookbox.db`;
}

/** Runs `fn` on a service over a fresh embedded store (with `storage` caps), closed after. */
async function onService(
  fn: (h: Harness) => Promise<void>,
  options: { now?: () => number; storage?: Partial<StorageLimits> } = {},
): Promise<void> {
  const h = await harness(openSqliteStore(await sqlitePath()), options.now, 0, options.storage);
  try {
    await fn(h);
  } finally {
    await h.close();
  }
}

Deno.test("no audit, no answer: a store that cannot write answers 503 and loses nothing acknowledged", async () => {
  const store = openSqliteStore(await sqlitePath());
  const h = await harness(store);
  try {
    const key = await h.tenant("acme");
    const append = store.appendAudit.bind(store);
    assert.equal((await h.call("POST", "/v1/events", { key, body: toolEvent("ls") })).status, 200);
    store.appendAudit = () => Promise.reject(new Error("disk full"));
    const down = await h.call("POST", "/v1/events", { key, body: toolEvent("ls") });
    assert.deepEqual([down.status, down.body.error.code], [503, "STORE_UNAVAILABLE"]);
    assert.equal(down.body.decision, undefined, "no decision leaves without its audit row");
    store.appendAudit = append;
    assert.equal((await h.call("POST", "/v1/events", { key, body: toolEvent("ls") })).status, 200);
    assert.equal(await store.countAudit("acme"), 2, "one row per answer, none for the refused one");
  } finally {
    await h.close();
  }
});

Deno.test("an embedded store that fails answers 503 STORE_UNAVAILABLE with Retry-After, never 500", async () => {
  await onService(async (h) => {
    const key = await h.tenant("acme");
    assert.equal((await h.call("POST", "/v1/events", { key, body: toolEvent("ls") })).status, 200);
    await h.store.close(); // every statement now fails inside node:sqlite
    for (
      const [path, options] of [
        ["/v1/events", { key, body: toolEvent("ls") }],
        ["/v1/tenants", {}],
      ] as const
    ) {
      const answer = await h.call(path === "/v1/events" ? "POST" : "GET", path, options);
      assert.deepEqual([answer.status, answer.body.error.code], [503, "STORE_UNAVAILABLE"], path);
      assert.equal(answer.headers.get("retry-after"), "1");
    }
    // Every 503 carries Retry-After, the liveness probe's too.
    const health = await h.call("GET", "/healthz", { key: null });
    assert.deepEqual([health.status, health.headers.get("retry-after")], [503, "1"]);
  });
});

Deno.test("a server out of file descriptors answers 503 OUT_OF_FILES with Retry-After, never 500", async () => {
  await onService(async (h) => {
    const key = await h.tenant("acme");
    const list = h.store.listHookItems!.bind(h.store);
    // As Deno and Node say it: in the message, or as the error's code.
    const failures = [
      new Error("Too many open files (os error 24): open '/tmp/hookbox-upload-x/HOOK.md'"),
      Object.assign(new Error("EMFILE: too many open files, scandir"), { code: "EMFILE" }),
    ];
    for (const failure of failures) {
      h.store.listHookItems = () => Promise.reject(failure);
      const answer = await h.call("GET", "/v1/hooks", { key });
      assert.deepEqual([answer.status, answer.body.error.code], [503, "OUT_OF_FILES"]);
      assert.equal(answer.headers.get("retry-after"), "1");
      assert.match(answer.body.error.message, /out of file descriptors/);
    }
    h.store.listHookItems = list;
    assert.equal((await h.call("GET", "/v1/hooks", { key })).status, 200);
  });
});

Deno.test("a request body that breaks off is 400 BODY_UNREADABLE, and 503 SHUTTING_DOWN once the server stops", async () => {
  await onService(async (h) => {
    const key = await h.tenant("acme");
    const broken = () =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"event_type":'));
          controller.error(new Error("connection reset by peer"));
        },
      });
    const cut = await h.call("POST", "/v1/events", { key, raw: broken() });
    assert.deepEqual([cut.status, cut.body.error.code], [400, "BODY_UNREADABLE"]);
    assert.match(cut.body.error.message, /connection reset by peer/);
    assert.equal((await h.call("GET", "/healthz", { key: null })).status, 200);
    h.service.beginShutdown();
    // Deno's shutdown ends the body reads in flight: the client is told to retry elsewhere.
    const late = await h.call("POST", "/v1/events", { key, raw: broken() });
    assert.deepEqual(
      [late.status, late.body.error.code, late.headers.get("retry-after")],
      [503, "SHUTTING_DOWN", "1"],
    );
    const health = await h.call("GET", "/healthz", { key: null });
    assert.deepEqual([health.status, health.body.error.code], [503, "SHUTTING_DOWN"]);
    // What is in flight still finishes.
    const whole = await h.call("POST", "/v1/events", { key, body: toolEvent("ls") });
    assert.equal(whole.status, 200);
  });
});

Deno.test("GET /v1/audit with a filter that matches little looks at AUDIT_SCAN_ROWS rows per page, and its cursor finds the rest", async () => {
  await onService(async (h) => {
    const key = await h.tenant("acme");
    const row = (i: number, session: string) => ({
      decision_id: `dec-${i}`,
      tenant_id: "acme",
      at: new Date(Date.UTC(2026, 10, 23) + i).toISOString(),
      session_id: session,
      event_type: "pre-tool-call",
      decision: "allow",
      reason: null,
      blocked_by: null,
      dry_run: false,
      hooks: [],
    });
    // The oldest row is the only one of session "needle"; a page looks at the newest rows first.
    await h.store.appendAudit([row(0, "needle")]);
    for (let i = 1; i <= AUDIT_SCAN_ROWS; i += 1000) {
      await h.store.appendAudit(
        Array.from({ length: 1000 }, (_, j) => row(i + j, "hay")),
      );
    }
    const first = await h.call("GET", "/v1/audit?session_id=needle", { key });
    assert.equal(first.status, 200);
    assert.deepEqual(first.body.items, []);
    assert.ok(first.body.next_cursor, "an empty page that is not the end says where to go on");
    const second = await h.call(
      "GET",
      `/v1/audit?session_id=needle&cursor=${first.body.next_cursor}`,
      { key },
    );
    assert.deepEqual(second.body.items.map((i: { decision_id: string }) => i.decision_id), [
      "dec-0",
    ]);
    assert.equal(second.body.next_cursor, null);
    // Without a filter nothing is bounded: a full page at once.
    const plain = await h.call("GET", "/v1/audit?limit=1000", { key });
    assert.equal(plain.body.items.length, 1000);
  });
});

Deno.test("one tenant's upload leaves other tenants' warm instances warm", async () => {
  await onService(async (h) => {
    const acme = await h.tenant("acme");
    const other = await h.tenant("other");
    const guard = await wasmFolder("guard", "guard_wasi", "isolation: warm\n");
    await h.call("PUT", "/v1/hooks/guard", { key: acme, body: guard });
    const event = { key: acme, body: toolEvent("ls") };
    assert.equal((await h.call("POST", "/v1/events", event)).status, 200);
    assert.equal(h.runtimes.wasm.stats?.().warmInstances, 1);
    for (let i = 0; i < 3; i++) {
      // Each upload is a new hooks generation for the whole store.
      const up = await h.call("PUT", `/v1/hooks/g${i}`, {
        key: other,
        body: await wasmFolder(`g${i}`, "guard_wasi"),
      });
      assert.equal(up.status, 201);
      assert.equal((await h.call("POST", "/v1/events", event)).status, 200);
    }
    // The same instance served acme's four events: none was made cold by other's uploads.
    assert.equal(h.runtimes.wasm.stats?.().warmInstances, 1);
    // And the runtimes were handed the same hook throughout (they key what they
    // prepared on it), until acme's own hook changed.
    const before = (await h.engine.hooks("acme"))[0]!.definition;
    await h.call("PUT", "/v1/hooks/g9", { key: other, body: await wasmFolder("g9", "guard_wasi") });
    assert.equal((await h.engine.hooks("acme"))[0]!.definition, before);
    await h.call("PUT", "/v1/hooks/guard", { key: acme, body: guard });
    const after = (await h.engine.hooks("acme"))[0]!;
    assert.notEqual(after.definition, before);
    assert.equal(after.version, 2);
    // Re-listing after an upload reads heads; only a changed version is read whole. (The
    // uploading tenant's own hooks are read for the workers to compile them: not counted.)
    let wholeReads = 0;
    const activeHook = h.store.activeHook!.bind(h.store);
    h.store.activeHook = (tenant, name) => {
      if (tenant === "acme") wholeReads++;
      return activeHook(tenant, name);
    };
    await h.call("PUT", "/v1/hooks/g10", {
      key: other,
      body: await wasmFolder("g10", "guard_wasi"),
    });
    assert.equal((await h.engine.hooks("acme"))[0]!.version, 2);
    assert.equal(wholeReads, 0, "acme's unchanged hook is not read again");
    await h.call("PUT", "/v1/hooks/guard", { key: acme, body: guard });
    assert.equal((await h.engine.hooks("acme"))[0]!.version, 3);
    assert.equal(wholeReads, 1, "its new version is");
  });
});

Deno.test("a tenant cannot fill the store: hooks, versions and bytes are capped, and freed again", async () => {
  let clock = Date.now();
  const guard = await pluginBytes("guard_wasi");
  const folder = (name: string) => ({
    files: { "HOOK.md": hookMd(name), "plugin.wasm": { base64: encodeBase64(guard) } },
  });
  await onService(async (counts) => {
    const key = await counts.tenant("acme");
    const put = (name: string) =>
      counts.call("PUT", `/v1/hooks/${name}`, { key, body: folder(name) });
    assert.equal((await put("a")).status, 201);
    assert.equal((await put("b")).status, 201);
    const third = await put("c");
    assert.deepEqual([third.status, third.body.error.problems[0].code], [422, "HOOK_TOO_MANY"]);
    // New versions of a hook it has are still taken; only the newest three are kept.
    for (let i = 0; i < 3; i++) assert.equal((await put("a")).status, 201);
    const versions = (await counts.call("GET", "/v1/hooks/a", { key })).body.versions;
    assert.deepEqual(versions.map((v: { version: number }) => v.version), [2, 3, 4]);
  }, { storage: { hooksPerTenant: 2, versionsPerHook: 3 } });
  // Each version holds the plugin twice (as built and as uploaded) plus its HOOK.md.
  await onService(async (h) => {
    const key = await h.tenant("acme");
    const other = await h.tenant("other");
    const put = (name: string, k = key) =>
      h.call("PUT", `/v1/hooks/${name}`, { key: k, body: folder(name) });
    assert.equal((await put("a")).status, 201);
    assert.equal((await put("b")).status, 201);
    const over = await put("c");
    assert.deepEqual([over.status, over.body.error.problems[0].code], [422, "HOOK_FILE_TOO_LARGE"]);
    assert.equal((await put("a", other)).status, 201, "another tenant has its own quota");
    // Deleting a hook frees its share of the quota, and its blobs once nothing refers to them.
    assert.equal((await h.call("DELETE", "/v1/hooks/a", { key })).status, 204);
    assert.equal((await put("c")).status, 201);
    const sha = (await h.call("GET", "/v1/hooks/c", { key })).body.sha256;
    assert.equal((await h.call("DELETE", "/v1/hooks/a", { key: other })).status, 204);
    assert.equal(await h.service.sweepBlobs(), 0, "nothing is swept within the grace period");
    clock += 2 * 3_600_000;
    assert.equal(await h.service.sweepBlobs(), 1, "a's HOOK.md, which no hook uses any more");
    assert.ok(await h.store.getBlob(sha), "the plugin is still used by b and c");
    for (const name of ["b", "c"]) {
      assert.equal((await h.call("DELETE", `/v1/hooks/${name}`, { key })).status, 204);
    }
    assert.equal(await h.service.sweepBlobs(), 3, "the plugin and b's and c's HOOK.md");
    assert.equal(await h.store.getBlob(sha), null);
  }, { now: () => clock, storage: { bytesPerTenant: 5 * guard.byteLength } });
});

Deno.test("concurrent dispatches share audit commits and every answer has its row", async () => {
  const h = await harness(openSqliteStore(await sqlitePath()));
  try {
    const key = await h.tenant("acme");
    await h.call("PUT", "/v1/hooks/guard", { key, body: await wasmFolder("guard", "guard_wasi") });
    const before = h.service.audit.commits;
    const answers = await Promise.all(
      Array.from(
        { length: 60 },
        (_, i) => h.call("POST", "/v1/events", { key, body: toolEvent(i % 2 ? "ls" : "rm -rf /") }),
      ),
    );
    assert.ok(answers.every((a) => a.status === 200));
    const ids = new Set(answers.map((a) => a.body.decision_id));
    assert.equal(ids.size, 60);
    const commits = h.service.audit.commits - before;
    assert.ok(commits < 60, `60 rows in ${commits} commits`);
    const rows = await h.store.readAudit({ tenant_id: "acme", limit: 100 });
    assert.deepEqual(new Set(rows.items.map((r) => r.decision_id)), ids);
  } finally {
    await h.close();
  }
});

Deno.test("audit retention deletes rows past each tenant's audit_retention_days", async () => {
  let now = Date.parse("2026-01-01T00:00:00Z");
  const h = await harness(openSqliteStore(await sqlitePath()), () => now);
  try {
    const short = await h.tenant("short", { audit_retention_days: 1 });
    const long = await h.tenant("long");
    for (const key of [short, long]) {
      await h.call("POST", "/v1/events", { key, body: toolEvent("ls") });
    }
    now += 2 * 86_400_000;
    assert.equal(await h.service.pruneAudit(), 1);
    assert.equal(await h.store.countAudit("short"), 0);
    assert.equal(await h.store.countAudit("long"), 1, "default retention is 30 days");
    now += 30 * 86_400_000;
    assert.equal(await h.service.pruneAudit(), 1);
  } finally {
    await h.close();
  }
});

Deno.test("the upkeep deletes quota usage of minutes over an hour old, and quotas still count", async () => {
  let now = Date.parse("2026-01-01T00:00:00Z");
  await onService(async (h) => {
    const key = await h.tenant("acme", { events_per_minute: 2 });
    const send = () => h.call("POST", "/v1/events", { key, body: toolEvent("ls") });
    assert.deepEqual([(await send()).status, (await send()).status, (await send()).status], [
      200,
      200,
      429,
    ]);
    assert.equal(await h.service.pruneUsage(), 0, "this minute is kept");
    now += 30 * 60_000;
    assert.equal((await send()).status, 200);
    assert.equal(await h.service.pruneUsage(), 0, "the first minute ended under an hour ago");
    now += 31 * 60_000;
    assert.equal(await h.service.pruneUsage(), 1, "the first minute goes, the second stays");
    assert.deepEqual([(await send()).status, (await send()).status, (await send()).status], [
      200,
      200,
      429,
    ]);
  }, { now: () => now });
});

Deno.test("a tenant's flood of refusals or 503s is counted in the log, not written line by line, and others' lines stay", async () => {
  let now = Date.parse("2026-01-01T00:00:10Z");
  const lines: Record<string, unknown>[] = [];
  const store = openSqliteStore(await sqlitePath());
  const h = await harness(store, () => now, 0, undefined, { log: (entry) => lines.push(entry) });
  try {
    const hot = await h.tenant("hot", { events_per_minute: 1 });
    const calm = await h.tenant("calm");
    const send = (key: string) => h.call("POST", "/v1/events", { key, body: toolEvent("ls") });
    assert.equal((await send(hot)).status, 200);
    for (let i = 0; i < 500; i++) assert.equal((await send(hot)).status, 429);
    // Another tenant's client errors and answers are its own, whatever the flood.
    for (let i = 0; i < 5; i++) {
      assert.equal(
        (await h.call("POST", "/v1/events", { key: calm, raw: "{not json" })).status,
        400,
      );
    }
    assert.equal((await send(calm)).status, 200);
    const requests = (tenant: string, status: number) =>
      lines.filter((l) => l.msg === "request" && l.tenant === tenant && l.status === status).length;
    assert.equal(requests("hot", 429), CLIENT_ERROR_LINES, "the flood's first lines are written");
    assert.equal(requests("calm", 400), 5);
    assert.equal(requests("calm", 200), 1);
    // A second later, one line says how many were held back.
    now += 1000;
    h.service.flushLogLines();
    const held = lines.filter((l) => l.msg === "requests not logged");
    assert.deepEqual(held.map(({ at: _, ...l }) => l), [{
      level: "info",
      msg: "requests not logged",
      tenant: "hot",
      count: 500 - CLIENT_ERROR_LINES,
      statuses: { 429: 500 - CLIENT_ERROR_LINES },
      since_ms: 1000,
    }]);
    // The metrics count every request.
    const metrics = await h.call("GET", "/metrics");
    assert.match(metrics.body, /status="429"[^\n]* 500\n/);
    // A new second: lines again.
    assert.equal((await send(hot)).status, 429);
    assert.equal(requests("hot", 429), CLIENT_ERROR_LINES + 1);
    // The same line again and again while the store cannot write (503): bounded the same way;
    // a 500 would always be written.
    now += 1000;
    h.service.flushLogLines();
    store.appendAudit = () => Promise.reject(new Error("disk full"));
    for (let i = 0; i < 100; i++) assert.equal((await send(calm)).status, 503);
    assert.equal(requests("calm", 503), CLIENT_ERROR_LINES);
    now += 1000;
    h.service.flushLogLines();
    const unavailable = lines.filter((l) => l.msg === "requests not logged" && l.tenant === "calm");
    assert.deepEqual(unavailable.map((l) => l.statuses), [{ 503: 100 - CLIENT_ERROR_LINES }]);
  } finally {
    await h.close();
  }
});

Deno.test("an agent's call the service cannot answer is the agent's block where a closed guard applies", async () => {
  // An agent lets the action through when its hook call gets no answer (a 429 or a 503 is its
  // non-blocking error): over a quota, or with the store gone, a closed guard still blocks.
  let now = Date.parse("2026-01-01T00:00:10Z");
  await onService(async (h) => {
    const claude = {
      session_id: "s",
      cwd: "/repo",
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "ls" },
    };
    const keys: Record<string, string> = {};
    for (const onError of ["closed", "open"]) {
      const key = keys[onError] = await h.tenant(onError, { events_per_minute: 1 });
      const up = await h.call("PUT", "/v1/hooks/guard", {
        key,
        body: await wasmFolder("guard", "guard_wasi", `on_error: ${onError}\n`),
      });
      assert.equal(up.status, 201, JSON.stringify(up.body));
    }
    const ask = (key: string, query = "") =>
      h.call("POST", `/v1/agents/claude-code/events${query}`, { key, body: claude });
    for (const key of Object.values(keys)) assert.equal((await ask(key)).status, 200);
    // Over the quota: the closed guard's tenant gets Claude's deny, naming why.
    const over = await ask(keys.closed!);
    assert.equal(over.status, 200, JSON.stringify(over.body));
    assert.equal(over.body.hookSpecificOutput.permissionDecision, "deny");
    assert.match(
      over.body.hookSpecificOutput.permissionDecisionReason,
      /could not answer this PreToolUse: QUOTA_EXCEEDED: .*hook "guard" guards it and fails closed/,
    );
    const command = await ask(keys.closed!, "?form=command");
    assert.equal(command.status, 200);
    // Refused before its body was read: Claude's block by exit code, the reason on stderr.
    assert.deepEqual([command.body.exit_code, command.body.stdout], [2, ""]);
    assert.match(command.body.stderr, /QUOTA_EXCEEDED: .*hook "guard" guards it and fails closed/);
    // Only an open guard: the refusal it is.
    const open = await ask(keys.open!);
    assert.deepEqual([open.status, open.body.error.code], [429, "QUOTA_EXCEEDED"]);
    // The audit cannot be written (no audit, no answer): the same.
    now += 60_000;
    h.store.appendAudit = () => Promise.reject(new Error("disk full"));
    const down = await ask(keys.closed!);
    assert.equal(down.status, 200, JSON.stringify(down.body));
    assert.match(
      down.body.hookSpecificOutput.permissionDecisionReason,
      /STORE_UNAVAILABLE: .*hook "guard" guards it and fails closed/,
    );
    const openDown = await ask(keys.open!);
    assert.deepEqual([openDown.status, openDown.body.error.code], [503, "STORE_UNAVAILABLE"]);
    // The store cannot even check the key (a database restarting): the tenant the key last
    // named, and the hooks last served to it, still say that a closed guard applies.
    const lookup = h.store.tenantForKey.bind(h.store);
    h.store.tenantForKey = () => Promise.reject(new StoreUnavailable("connection refused"));
    const gone = await ask(keys.closed!);
    assert.equal(gone.status, 200, JSON.stringify(gone.body));
    assert.equal(gone.body.hookSpecificOutput.permissionDecision, "deny");
    assert.match(
      gone.body.hookSpecificOutput.permissionDecisionReason,
      /could not answer this PreToolUse: STORE_UNAVAILABLE: .*hook "guard" guards it/,
    );
    // An event the guard does not watch, an open guard's tenant, a key never seen: the 503.
    const stop = await h.call("POST", "/v1/agents/claude-code/events", {
      key: keys.closed!,
      body: { ...claude, hook_event_name: "SessionStart" },
    });
    assert.deepEqual([stop.status, stop.body.error.code], [503, "STORE_UNAVAILABLE"]);
    const openGone = await ask(keys.open!);
    assert.deepEqual([openGone.status, openGone.body.error.code], [503, "STORE_UNAVAILABLE"]);
    const stranger = await ask("hbk_" + "x".repeat(43));
    assert.deepEqual([stranger.status, stranger.body.error.code], [503, "STORE_UNAVAILABLE"]);
    // Other routes do not go on with a key the store has not checked.
    const events = await h.call("POST", "/v1/events", { key: keys.closed!, body: toolEvent("ls") });
    assert.deepEqual([events.status, events.body.error.code], [503, "STORE_UNAVAILABLE"]);
    // A key the store has since said is unknown is forgotten.
    h.store.tenantForKey = lookup;
    assert.equal((await h.call("DELETE", "/v1/tenants/closed")).status, 204);
    assert.equal((await ask(keys.closed!)).status, 401);
    h.store.tenantForKey = () => Promise.reject(new StoreUnavailable("connection refused"));
    const revoked = await ask(keys.closed!);
    assert.deepEqual([revoked.status, revoked.body.error.code], [503, "STORE_UNAVAILABLE"]);
  }, { now: () => now });
});

Deno.test("a tenant over a per-minute quota is refused before its body is read, until the minute ends or its policy changes", async () => {
  let now = Date.parse("2026-01-01T00:00:10Z");
  await onService(async (h) => {
    const key = await h.tenant("acme", { events_per_minute: 2 });
    const send = (raw = JSON.stringify(toolEvent("ls"))) =>
      h.call("POST", "/v1/events", { key, raw });
    assert.deepEqual([(await send()).status, (await send()).status, (await send()).status], [
      200,
      200,
      429,
    ]);
    // Not read, so not parsed: a body that is not JSON gets the 429, not a 400, and so does a
    // megabyte of small keys (which would hold the thread answering every tenant to parse).
    const keys = Object.fromEntries(Array.from({ length: 70_000 }, (_, i) => [`k${i}`, i]));
    for (
      const raw of [
        "{not json",
        JSON.stringify({ ...(toolEvent("ls") as object), tool_input: keys }),
      ]
    ) {
      const early = await send(raw);
      assert.deepEqual([early.status, early.body.error.code], [429, "QUOTA_EXCEEDED"]);
      assert.equal(early.headers.get("retry-after"), "50", "the minute ends in 50 s");
    }
    const agent = await h.call("POST", "/v1/agents/claude-code/events", { key, raw: "{not json" });
    assert.deepEqual([agent.status, agent.body.error.code], [429, "QUOTA_EXCEEDED"]);
    // A changed policy is applied at once.
    const put = await h.call("PUT", "/v1/tenants/acme/policy", { body: { events_per_minute: 4 } });
    assert.equal(put.status, 200);
    assert.deepEqual([(await send("{not json")).status, (await send()).status], [400, 200]);
    assert.equal((await send()).status, 429);
    // The next minute counts afresh.
    now += 60_000;
    assert.equal((await send()).status, 200);
  }, { now: () => now });
});

/** A gzip'd tar of `files` made by the system's `tar`, optionally with a symlink. */
async function tarball(
  files: Record<string, Uint8Array | string>,
  symlink?: string,
): Promise<Uint8Array<ArrayBuffer>> {
  const dir = await tempDir("hookbox-test-");
  await Deno.mkdir(`${dir}/guard/scripts`, { recursive: true });
  for (const [path, data] of Object.entries(files)) {
    if (typeof data === "string") await Deno.writeTextFile(`${dir}/guard/${path}`, data);
    else await Deno.writeFile(`${dir}/guard/${path}`, data);
  }
  if (symlink) await Deno.symlink("/etc/passwd", `${dir}/guard/${symlink}`);
  const out = await new Deno.Command("tar", {
    args: ["-czf", "-", "-C", dir, "guard"],
    stdout: "piped",
  }).output();
  await Deno.remove(dir, { recursive: true });
  return out.stdout as Uint8Array<ArrayBuffer>;
}

Deno.test("a hook folder uploads as a gzip'd tar; links, bombs and garbage are refused", async () => {
  const h = await harness(openSqliteStore(await sqlitePath()));
  try {
    const key = await h.tenant("acme");
    const gz = { "content-type": "application/gzip" };
    const files = { "HOOK.md": hookMd("guard"), "plugin.wasm": await pluginBytes("guard_wasi") };
    const up = await h.call("PUT", "/v1/hooks/guard", {
      key,
      raw: await tarball(files),
      headers: gz,
    });
    assert.deepEqual([up.status, up.body.version, up.body.built_from], [201, 1, "wasm"]);
    const blocked = await h.call("POST", "/v1/events", { key, body: toolEvent("rm -rf /") });
    assert.equal(blocked.body.decision, "block");
    const link = await h.call("PUT", "/v1/hooks/guard", {
      key,
      raw: await tarball(files, "scripts/run.js"),
      headers: gz,
    });
    assert.deepEqual([link.status, link.body.error.code], [422, "HOOK_REJECTED"]);
    // 100 MB of zeros gzip to about 100 KB: refused while unpacking.
    const bomb = await new Response(
      new Blob([new Uint8Array(100 * 1024 * 1024)]).stream().pipeThrough(
        new CompressionStream("gzip"),
      ),
    ).bytes();
    const big = await h.call("PUT", "/v1/hooks/guard", { key, raw: bomb, headers: gz });
    assert.deepEqual([big.status, big.body.error.code], [413, "BODY_TOO_LARGE"]);
    const junk = await h.call("PUT", "/v1/hooks/guard", { key, raw: "not gzip", headers: gz });
    assert.deepEqual([junk.status, junk.body.error.code], [400, "ARCHIVE_INVALID"]);
    assert.equal((await h.call("GET", "/v1/hooks/guard", { key })).body.versions.length, 1);
  } finally {
    await h.close();
  }
});

Deno.test("a JS hook is compiled at upload; a compile error is a 422 with the compiler's message", async () => {
  const h = await harness(openSqliteStore(await sqlitePath()));
  try {
    const key = await h.tenant("acme");
    const js = `const fs = require("fs");
const event = JSON.parse(fs.readFileSync(0, "utf8"));
if (String(event.tool_input.command).includes("curl")) { console.error("no network"); process.exit(2); }`;
    const up = await h.call("PUT", "/v1/hooks/no-curl", {
      key,
      body: { files: { "HOOK.md": hookMd("no-curl"), "scripts/run.js": js } },
    });
    assert.equal(up.status, 201, JSON.stringify(up.body));
    assert.equal(up.body.built_from, "js");
    const res = await h.call("POST", "/v1/events", { key, body: toolEvent("curl evil.example") });
    assert.deepEqual([res.body.decision, res.body.reason], ["block", "no network"]);
    const broken = await h.call("PUT", "/v1/hooks/broken", {
      key,
      body: {
        files: { "HOOK.md": hookMd("broken"), "scripts/run.js": "export default function ( {" },
      },
    });
    assert.deepEqual([broken.status, broken.body.error.code], [422, "HOOK_REJECTED"]);
    assert.match(broken.body.error.message, /does not compile/);
    assert.ok(broken.body.error.problems[0].code.startsWith("COMPILE"));
  } finally {
    await h.close();
  }
});

Deno.test("an AssemblyScript hook is compiled at upload and rewrites the command", async () => {
  const h = await harness(openSqliteStore(await sqlitePath()));
  try {
    const key = await h.tenant("acme");
    const source = await Deno.readTextFile(
      new URL("../fixtures/as/modify_input.as.ts", import.meta.url),
    );
    const up = await h.call("PUT", "/v1/hooks/timeout", {
      key,
      body: { files: { "HOOK.md": hookMd("timeout"), "scripts/run.as.ts": source } },
    });
    assert.deepEqual([up.status, up.body.built_from], [201, "as"], JSON.stringify(up.body));
    const res = await h.call("POST", "/v1/events", { key, body: toolEvent("make test") });
    assert.deepEqual(res.body.modified_input, { command: "timeout 60 make test" });
  } finally {
    await h.close();
  }
});

Deno.test("two services on one store act as one: uploads, rollbacks and revocations are seen at once", async () => {
  const path = await sqlitePath();
  const a = await harness(openSqliteStore(path));
  const b = await harness(openSqliteStore(path));
  try {
    const key = await a.tenant("acme");
    await a.call("PUT", "/v1/hooks/guard", {
      key,
      body: await wasmFolder("guard", "rewrite_wasi"),
    });
    assert.equal(
      (await b.call("POST", "/v1/events", { key, body: toolEvent("rm -rf /") })).body.decision,
      "allow",
    );
    await b.call("PUT", "/v1/hooks/guard", { key, body: await wasmFolder("guard", "guard_wasi") });
    assert.equal(
      (await a.call("POST", "/v1/events", { key, body: toolEvent("rm -rf /") })).body.decision,
      "block",
    );
    await a.call("POST", "/v1/hooks/guard/rollback", { key, body: { version: 1 } });
    assert.equal(
      (await b.call("POST", "/v1/events", { key, body: toolEvent("rm -rf /") })).body.decision,
      "allow",
    );
    const second = await a.call("POST", "/v1/tenants/acme/keys", { body: {} });
    assert.equal((await b.call("GET", "/v1/hooks", { key: second.body.key })).status, 200);
    await a.call("DELETE", `/v1/tenants/acme/keys/${second.body.id}`);
    assert.equal((await b.call("GET", "/v1/hooks", { key: second.body.key })).status, 401);
  } finally {
    await a.close();
    await b.close();
  }
});

Deno.test("GET /openapi.json validates as OpenAPI 3.1", async () => {
  await onService(async (h) => {
    const doc = await h.call("GET", "/openapi.json", { key: null });
    assert.equal(doc.status, 200);
    const validator = new Validator();
    const result = await validator.validate(doc.body);
    assert.equal(validator.version, "3.1");
    assert.equal(result.valid, true, JSON.stringify(result.errors));
  });
});

Deno.test("an upload whose compilation runs too long is refused (compiled in its own process, killed)", async () => {
  const builder = createDenoHookBuilder({ compileTimeoutMs: 1 });
  const files = new Map([
    ["HOOK.md", new TextEncoder().encode(hookMd("slow"))],
    ["scripts/run.js", new TextEncoder().encode('console.log("{}");')],
  ]);
  await assert.rejects(builder.build("slow", files), (err) => {
    assert.ok(err instanceof HookRejected, String(err));
    assert.equal(err.problems[0]?.code, "COMPILE_FAILED");
    assert.match(err.problems[0]!.message, /did not finish compiling in 1 ms/);
    return true;
  });
});

Deno.test("a chunked body in pieces of every size from 1 byte to 4 KiB is read whole", async () => {
  const h = await harness(openSqliteStore(await sqlitePath()));
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, h.service.app.fetch);
  try {
    const key = await h.tenant("acme");
    const text = JSON.stringify(toolEvent(`echo ${"y".repeat(200_000)}`));
    const bytes = new TextEncoder().encode(text);
    // Sizes 1, 2, 3, … bytes, then back to 1 past 4 KiB: the reader's buffer grows and is
    // offered every amount of room.
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0, size = 1; at < bytes.length; at += size, size = size % 4096 + 1) {
          controller.enqueue(bytes.slice(at, at + size));
        }
        controller.close();
      },
    });
    const res = await fetch(`http://127.0.0.1:${server.addr.port}/v1/events`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}` },
      body,
      signal: AbortSignal.timeout(30_000),
    });
    const answer = await res.json();
    assert.deepEqual([res.status, answer.decision], [200, "allow"], JSON.stringify(answer));
  } finally {
    await server.shutdown();
    await h.close();
  }
});

Deno.test("request bodies over real HTTP: declared, chunked and lying lengths are all held to the cap", async () => {
  const h = await harness(openSqliteStore(await sqlitePath()));
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, h.service.app.fetch);
  const { port } = server.addr;
  const url = `http://127.0.0.1:${port}/v1/events`;
  try {
    const key = await h.tenant("acme", { input_kb: 4 });
    const auth = { authorization: `Bearer ${key}` };
    const event = (command: string) => JSON.stringify(toolEvent(command));
    const code = async (res: Response) => [res.status, (await res.json()).error?.code ?? null];
    // fetch declares the length of a string body: read in one piece.
    const declared = await fetch(url, { method: "POST", headers: auth, body: event("ls") });
    assert.deepEqual([declared.status, (await declared.json()).decision], [200, "allow"]);
    const declaredBig = await fetch(url, {
      method: "POST",
      headers: auth,
      body: event("x".repeat(5000)),
    });
    assert.deepEqual(await code(declaredBig), [413, "BODY_TOO_LARGE"]);
    // A stream body goes out chunked, with no length: read chunk by chunk, cut off at the cap.
    const chunked = (text: string, times: number) =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < times; i++) controller.enqueue(new TextEncoder().encode(text));
          controller.close();
        },
      });
    const small = await fetch(url, {
      method: "POST",
      headers: auth,
      body: chunked(event("ls"), 1),
    });
    assert.equal(small.status, 200);
    await small.body?.cancel();
    const endless = await fetch(url, { method: "POST", headers: auth, body: chunked("x", 10_000) });
    assert.deepEqual(await code(endless), [413, "BODY_TOO_LARGE"]);
    // A declared length over the cap is refused before the body is sent.
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    await conn.write(
      new TextEncoder().encode(
        `POST /v1/events HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\ncontent-length: 900000000\r\n\r\n{`,
      ),
    );
    const head = new Uint8Array(4096);
    const n = await conn.read(head);
    conn.close();
    assert.match(new TextDecoder().decode(head.subarray(0, n ?? 0)), /^HTTP\/1\.1 413 /);
    // In process, a header that understates the body does not lift the cap.
    const lying = await h.service.app.fetch(
      new Request(url, {
        method: "POST",
        headers: { ...auth, "content-length": "10" },
        body: event("x".repeat(5000)),
      }),
    );
    assert.deepEqual(await code(lying), [413, "BODY_TOO_LARGE"]);
    assert.equal(await h.store.countAudit("acme"), 2, "only the two accepted events were audited");
  } finally {
    await server.shutdown();
    await h.close();
  }
});

Deno.test("POST /v1/agents/*: a payload the service cannot evaluate is the agent's block where a closed guard applies", async () => {
  await onService(async (h) => {
    const key = await h.tenant("acme", { input_kb: 64 });
    // As installed (`hookbox install --http`): the event rides in the URL.
    const send = (raw: string, query = "?event=PreToolUse") =>
      h.call("POST", `/v1/agents/claude-code/events${query}`, { key, raw });
    const payload = (toolInput: unknown) =>
      JSON.stringify({
        session_id: "s1",
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: toolInput,
      });
    let deep: unknown = "x";
    for (let i = 0; i < 100; i++) deep = [deep];
    const hostile = {
      "over input_kb": payload({ command: "rm -rf /", pad: "a".repeat(70 * 1024) }),
      "too deep": payload({ command: "rm -rf /", description: deep }),
      "not JSON": '{"hook_event_name": "PreToolUse", "tool_input": {"command": "rm -rf /"',
    };
    // Only an open guard: the coded error, as before (the agent's non-blocking error is honest).
    const up = await h.call("PUT", "/v1/hooks/guard", {
      key,
      body: await wasmFolder("guard", "guard_wasi"),
    });
    assert.equal(up.status, 201);
    for (const raw of Object.values(hostile)) assert.equal((await send(raw)).status >= 400, true);
    // A closed guard: every one is Claude's deny, naming the limit.
    const closed = await h.call("PUT", "/v1/hooks/guard", {
      key,
      body: await wasmFolder("guard", "guard_wasi", "on_error: closed\n"),
    });
    assert.equal(closed.status, 201);
    for (const [name, raw] of Object.entries(hostile)) {
      const answer = await send(raw);
      assert.equal(answer.status, 200, name);
      const out = answer.body.hookSpecificOutput ??
        assert.fail(`${name}: ${JSON.stringify(answer.body)}`);
      assert.equal(out.permissionDecision, "deny", name);
      assert.match(out.permissionDecisionReason, /hook "guard" guards it and fails closed/, name);
    }
    const command = await send(hostile["not JSON"], "?event=PreToolUse&form=command");
    assert.equal(command.body.exit_code, 0);
    assert.match(command.body.stdout, /"permissionDecision":"deny"/);
    // Refused unread, with no event in the URL: the generic block.
    const bare = await send(hostile["over input_kb"], "");
    assert.deepEqual([bare.status, bare.body.decision], [200, "block"]);
    // A readable call is answered by the guard itself.
    assert.equal((await send(payload({ command: "ls" }))).body.hookSpecificOutput, undefined);
  });
});

Deno.test("POST /v1/agents/*: the stop gate's budget runs out per session, and a new stop starts it again", async () => {
  await onService(async (h) => {
    const key = await h.tenant("acme");
    const gate = [
      "const event = JSON.parse(require('fs').readFileSync(0, 'utf8'));",
      "if (event.stop_count < 2) { console.error('attempt ' + (event.stop_count + 1) + ' of 3'); process.exit(2); }",
    ].join("\n");
    const up = await h.call("PUT", "/v1/hooks/gate", {
      key,
      body: {
        files: {
          "HOOK.md": "---\nname: gate\ndescription: d\ntrigger: pre-agent-turn-stop\n---\n",
          "scripts/run.js": gate,
        },
      },
    });
    assert.equal(up.status, 201, JSON.stringify(up.body));
    const stop = (session: string, active: boolean) =>
      h.call("POST", "/v1/agents/claude-code/events", {
        key,
        body: {
          session_id: session,
          hook_event_name: "Stop",
          stop_hook_active: active,
          last_assistant_message: "Done.",
        },
      });
    const answers = [];
    for (const active of [false, true, true]) answers.push((await stop("s1", active)).body);
    assert.deepEqual(answers, [
      { decision: "block", reason: "attempt 1 of 3" },
      { decision: "block", reason: "attempt 2 of 3" },
      {},
    ]);
    // Another session counts on its own; a stop that is not a retry starts again.
    assert.equal((await stop("s2", true)).body.reason, "attempt 2 of 3");
    assert.equal((await stop("s1", false)).body.reason, "attempt 1 of 3");
  });
});

Deno.test("uploads whose paths no file system can hold are refused by name, never a 500", async () => {
  await onService(async (h) => {
    const key = await h.tenant("acme");
    const wasm = await pluginBytes("guard_wasi");
    const long = "é".repeat(200); // 200 characters, 400 bytes of UTF-8: over a file name's 255
    const cases: Record<string, Record<string, string | Uint8Array>> = {
      "file then folder": { "HOOK.md": hookMd("guard"), "scripts": "x", "scripts/run.wasm": wasm },
      "folder then file": { "HOOK.md": hookMd("guard"), "scripts/run.wasm": wasm, "scripts": "x" },
      "HOOK.md as a folder": { "HOOK.md": hookMd("guard"), "HOOK.md/x": "y", "plugin.wasm": wasm },
      "a long name": { "HOOK.md": hookMd("guard"), "plugin.wasm": wasm, [`${long}.txt`]: "z" },
    };
    for (const [name, files] of Object.entries(cases)) {
      const json = {
        files: Object.fromEntries(
          Object.entries(files).map((
            [p, v],
          ) => [p, typeof v === "string" ? v : { base64: encodeBase64(v) }]),
        ),
      };
      const viaJson = await h.call("PUT", "/v1/hooks/guard", { key, body: json });
      assert.deepEqual([viaJson.status, viaJson.body.error?.code], [422, "HOOK_REJECTED"], name);
      assert.equal(viaJson.body.error.problems[0].code, "HOOK_PATH_OUTSIDE", name);
      // A ustar name holds 100 bytes: nanotar cannot write the long name (GNU tar can; below).
      if (name === "a long name") continue;
      const tar = createTar(
        Object.entries(files).map(([p, v]) => ({ name: `guard/${p}`, data: v })),
      );
      const gz = await new Response(
        new Blob([tar as Uint8Array<ArrayBuffer>]).stream().pipeThrough(
          new CompressionStream("gzip"),
        ),
      ).bytes();
      const viaTar = await h.call("PUT", "/v1/hooks/guard", {
        key,
        raw: gz,
        headers: { "content-type": "application/gzip" },
      });
      assert.deepEqual(
        [viaTar.status, viaTar.body.error?.code],
        [422, "HOOK_REJECTED"],
        `${name} (tar)`,
      );
    }
  });
});

Deno.test("fuel_per_minute holds over two services on one store: a burst never burns more than the quota", async () => {
  const path = await sqlitePath();
  const now = () => Date.parse("2026-01-01T00:00:10Z");
  const a = await harness(openSqliteStore(path), now);
  const b = await harness(openSqliteStore(path), now);
  try {
    const key = await a.tenant("acme");
    await a.call("PUT", "/v1/hooks/guard", { key, body: await wasmFolder("guard", "guard_wasi") });
    const one = await a.call("POST", "/v1/events?dry_run=1", { key, body: toolEvent("ls") });
    const perEvent = one.body.hooks[0].fuel as number;
    assert.ok(perEvent > 0);
    const quota = perEvent * 10;
    await a.call("PUT", "/v1/tenants/acme/policy", { body: { fuel_per_minute: quota } });
    const answers = await Promise.all(
      Array.from(
        { length: 60 },
        (_, i) =>
          (i % 2 === 0 ? a : b).call("POST", "/v1/events", { key, body: toolEvent(`ls ${i}`) }),
      ),
    );
    const burnt = answers.filter((r) => r.status === 200)
      .reduce(
        (n, r) => n + r.body.hooks.reduce((m: number, h: { fuel: number }) => m + h.fuel, 0),
        0,
      );
    assert.ok(burnt <= quota, `burnt ${burnt} of a ${quota} quota`);
    assert.ok(answers.some((r) => r.status === 429), "the rest is refused");
    const usage = await a.store.addUsage("acme", Date.parse("2026-01-01T00:00:00Z"), 0, 0);
    assert.ok(usage.fuel <= quota, `the store counts ${usage.fuel} of ${quota}`);
  } finally {
    await a.close();
    await b.close();
  }
});

Deno.test("a gzip bomb (1 MiB of gzip, 1 GiB of zeros) is refused while it unpacks, not after", async () => {
  const bomb = await new Response(
    new Blob([new Uint8Array(1024 * 1024 * 1024)]).stream().pipeThrough(
      new CompressionStream("gzip"),
    ),
  ).bytes();
  // What is measured is what the inflater produced before the refusal, not time.
  let produced = 0;
  const Original = globalThis.DecompressionStream;
  globalThis.DecompressionStream = class extends Original {
    constructor(format: CompressionFormat) {
      super(format);
      const counted = this.readable.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            produced += chunk.byteLength;
            controller.enqueue(chunk);
          },
        }),
      );
      Object.defineProperty(this, "readable", { value: counted });
    }
  } as typeof DecompressionStream;
  try {
    await assert.rejects(
      unpackArchive(bomb),
      (err: ApiError) => err.status === 413 && err.code === "BODY_TOO_LARGE",
    );
  } finally {
    globalThis.DecompressionStream = Original;
  }
  assert.ok(produced < 80 * 1024 * 1024, `inflated ${produced} bytes before the refusal`);
  // Through the service, the Deno builder unpacks it on a worker of its own: the same answer.
  await onService(async (h) => {
    const key = await h.tenant("acme");
    const big = await h.call("PUT", "/v1/hooks/guard", {
      key,
      raw: bomb,
      headers: { "content-type": "application/gzip" },
    });
    assert.deepEqual([big.status, big.body.error.code], [413, "BODY_TOO_LARGE"]);
  });
});

Deno.test("a body trickled in tiny pieces or never finished is cut off, and only its request", async () => {
  const h = await harness(openSqliteStore(await sqlitePath()), undefined, 0, undefined, {
    bodyReadMs: 300,
  });
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, h.service.app.fetch);
  const { port } = server.addr;
  try {
    const key = await h.tenant("acme");
    const raw = async (head: string, body: (conn: Deno.Conn) => Promise<void>) => {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      await conn.write(new TextEncoder().encode(head));
      await body(conn);
      const buffer = new Uint8Array(4096);
      const n = await conn.read(buffer);
      conn.close();
      return new TextDecoder().decode(buffer.subarray(0, n ?? 0));
    };
    const head = (extra: string) =>
      `POST /v1/events HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\n` +
      `content-type: application/json\r\n${extra}\r\n`;
    // Declared length, half sent, then nothing: 408 once the deadline passes.
    const stalled = await raw(
      head("content-length: 200\r\n"),
      (c) => c.write(new Uint8Array(100).fill(0x20)).then(() => {}),
    );
    assert.match(stalled, /^HTTP\/1\.1 408/);
    assert.match(stalled, /BODY_TOO_SLOW/);
    // An agent's payload that does not arrive in time, where a closed guard applies: its block.
    const up = await h.call("PUT", "/v1/hooks/guard", {
      key,
      body: await wasmFolder("guard", "guard_wasi", "on_error: closed\n"),
    });
    assert.equal(up.status, 201);
    const agentStalled = await raw(
      head("content-length: 200\r\n").replace(
        "/v1/events",
        "/v1/agents/claude-code/events?event=PreToolUse",
      ),
      (c) => c.write(new Uint8Array(100).fill(0x20)).then(() => {}),
    );
    assert.match(agentStalled, /^HTTP\/1\.1 200/);
    assert.match(agentStalled, /"permissionDecision":"deny"/);
    assert.match(agentStalled, /BODY_TOO_SLOW: .*hook \\"guard\\" guards it and fails closed/);
    // Chunked, a byte per chunk: refused by the count of pieces, well before the whole event.
    const event = JSON.stringify(toolEvent("ls", { pad: "x".repeat(10_000) }));
    const pieces = await raw(head("transfer-encoding: chunked\r\n"), async (conn) => {
      const bytes = new TextEncoder().encode(event);
      for (let i = 0; i < bytes.length; i += 1) {
        const ok = await conn.write(
          new TextEncoder().encode(`1\r\n${String.fromCharCode(bytes[i]!)}\r\n`),
        )
          .then(() => true, () => false);
        if (!ok) break;
        if (i % 512 === 0) await new Promise((resolve) => setTimeout(resolve, 0));
      }
    });
    // Cut off by one limit or the other, whichever comes first on this machine.
    assert.match(pieces, /^HTTP\/1\.1 (400|408)/);
    // Another request on its own connection is answered meanwhile and after.
    const fine = await fetch(`http://127.0.0.1:${port}/v1/events`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}` },
      body: JSON.stringify(toolEvent("ls")),
    });
    assert.equal(fine.status, 200);
    await fine.body?.cancel();
  } finally {
    await server.shutdown();
    await h.close();
  }
});

Deno.test("a body sent a byte per chunk is refused by its count of pieces (400 BODY_UNREADABLE)", async () => {
  const h = await harness(openSqliteStore(await sqlitePath()), undefined, 0, undefined, {
    bodyReadMs: 120_000,
  });
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, h.service.app.fetch);
  try {
    const key = await h.tenant("acme", { input_kb: 16 });
    const event = new TextEncoder().encode(
      JSON.stringify(toolEvent("ls", { pad: "x".repeat(12_000) })),
    );
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (sent >= event.length) return controller.close();
        controller.enqueue(event.subarray(sent, ++sent));
        // One byte per network write: the server sees each as a piece of its own.
        if (sent % 64 === 0) await new Promise((resolve) => setTimeout(resolve, 0));
      },
    });
    const res = await fetch(`http://127.0.0.1:${server.addr.port}/v1/events`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}` },
      body,
    });
    const answer = await res.json();
    assert.deepEqual([res.status, answer.error.code], [400, "BODY_UNREADABLE"]);
    assert.match(answer.error.message, /more than \d+ pieces/);
  } finally {
    await server.shutdown();
    await h.close();
  }
});

/**
 * POSTs to /v1/events in the app (no server) with `key` and a body that would go on for ever, a
 * byte at a time; the answer, how many bytes the service took and whether it cancelled the body.
 */
async function endlessPost(h: Awaited<ReturnType<typeof harness>>, key: string) {
  const seen = { pulls: 0, cancelled: false };
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      seen.pulls++;
      controller.enqueue(new Uint8Array([0x20]));
    },
    cancel() {
      seen.cancelled = true;
    },
  }, { highWaterMark: 0 });
  const res = await h.service.app.fetch(
    new Request("http://local/v1/events", {
      method: "POST",
      headers: { authorization: `Bearer ${key}` },
      body,
      duplex: "half",
    } as RequestInit),
  );
  return { res, seen };
}

Deno.test("a body refused for its pieces is left unread, not read on to its end", async () => {
  const h = await harness(openSqliteStore(await sqlitePath()), undefined, 0, undefined, {
    bodyReadMs: 120_000,
  });
  try {
    const key = await h.tenant("acme", { input_kb: 16 });
    const { res, seen } = await endlessPost(h, key);
    const answer = await res.json();
    assert.deepEqual([res.status, answer.error.code], [400, "BODY_UNREADABLE"]);
    const cap = Number(/more than (\d+) pieces/.exec(answer.error.message)?.[1]);
    // Cancelled, Deno.serve would read the rest to its end on the thread that answers events.
    assert.equal(seen.cancelled, false, "the body is not cancelled");
    const pulls = seen.pulls;
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(pulls <= cap + 2 && seen.pulls === pulls, `read no further than the cap (${pulls})`);
  } finally {
    await h.close();
  }
});

Deno.test("a body a refusal did not read: chunked is left unread, declared is read and keeps the connection", async () => {
  // In the app: an endless body of an unauthenticated request is not cancelled, not read on.
  const h = await harness(openSqliteStore(await sqlitePath()));
  try {
    const { res, seen } = await endlessPost(h, "not-a-key-0123456789abcdef");
    assert.equal(res.status, 401);
    await res.body?.cancel();
    assert.equal(seen.cancelled, false, "the body is not cancelled");
    assert.ok(seen.pulls <= 2, `read no further than its first piece (${seen.pulls})`);
  } finally {
    await h.close();
  }
  // Through `hookbox serve` (its own process): cancelled or left alone, Deno.serve would read the
  // body on to its end, as fast as it came, on the thread that answers every tenant.
  const dir = await tempDir("hookbox-test-");
  const server = await startServe({
    db: `${dir}/h.db`,
    adminKey: "unread-admin-key-0123456789abcdef",
  });
  try {
    let sent = 0;
    const abort = new AbortController();
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        sent += 65_536;
        controller.enqueue(new Uint8Array(65_536));
      },
    });
    const over = await fetch(`${server.url}/v1/events`, {
      method: "POST",
      headers: { authorization: "Bearer not-a-key-0123456789abcdef" },
      body: endless,
      signal: abort.signal,
    });
    assert.equal(over.status, 401);
    await over.body?.cancel();
    // Left unread, its sender stops at the sockets' buffers (a few MiB); read on, it would not.
    await new Promise((resolve) => setTimeout(resolve, 500));
    abort.abort();
    assert.ok(sent < 64 * 1024 * 1024, `the server read on: ${sent} bytes sent`);
    // A declared body (here a megabyte, sent whole before the answer is read) is read after the
    // refusal: its sender gets the answer, and the same connection serves the next request.
    const conn = await RawHttpConnection.open(server.url);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stuck = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("the refused upload's sender is stuck")), 30_000);
    });
    try {
      const refused = await Promise.race([
        conn.request("POST", "/v1/events", {
          authorization: "Bearer not-a-key-0123456789abcdef",
          "content-type": "application/json",
        }, JSON.stringify(toolEvent("ls", { pad: "x".repeat(1 << 20) }))),
        stuck,
      ]);
      assert.equal(refused.status, 401);
      assert.equal(
        (await Promise.race([conn.request("GET", "/healthz", {}, ""), stuck])).status,
        200,
      );
    } finally {
      clearTimeout(timer);
      conn.close();
    }
  } finally {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a tar entry with a long name (a pax header) is stored under that name", async () => {
  await onService(async (h) => {
    const key = await h.tenant("acme");
    const dir = await tempDir("hookbox-test-");
    try {
      const long = "d".repeat(120);
      await Deno.mkdir(`${dir}/guard/scripts`, { recursive: true });
      await Deno.writeTextFile(`${dir}/guard/HOOK.md`, hookMd("guard"));
      await Deno.writeFile(`${dir}/guard/plugin.wasm`, await pluginBytes("guard_wasi"));
      await Deno.writeTextFile(`${dir}/guard/${long}.txt`, "kept under its own name");
      const tar = await new Deno.Command("tar", {
        args: ["--format=pax", "-czf", "-", "-C", dir, "guard"],
        stdout: "piped",
      }).output();
      const up = await h.call("PUT", "/v1/hooks/guard", {
        key,
        raw: tar.stdout,
        headers: { "content-type": "application/gzip" },
      });
      assert.equal(up.status, 201, JSON.stringify(up.body));
      const detail = await h.call("GET", "/v1/hooks/guard", { key });
      assert.ok(
        Object.keys(detail.body.files).includes(`${long}.txt`),
        JSON.stringify(detail.body.files),
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("an audit item keeps each failed hook's stable code", async () => {
  await onService(async (h) => {
    const key = await h.tenant("acme");
    const up = await h.call("PUT", "/v1/hooks/crashy", {
      key,
      body: await wasmFolder("crashy", "trap_unreachable"),
    });
    assert.equal(up.status, 201, JSON.stringify(up.body));
    const answer = await h.call("POST", "/v1/events", { key, body: toolEvent("ls") });
    assert.equal(answer.body.hooks[0].code, "TRAP");
    const audit = await h.call("GET", "/v1/audit", { key });
    assert.deepEqual(
      [audit.body.items[0].hooks[0].outcome, audit.body.items[0].hooks[0].code],
      ["error", "TRAP"],
    );
  });
});

Deno.test("an upload's problems never name the server's own folders", async () => {
  await onService(async (h) => {
    const key = await h.tenant("acme");
    const files = {
      "HOOK.md": hookMd("as-bad"),
      "scripts/run.as.ts": "export function hook(): i32 { return nope; }\n",
    };
    const answer = await h.call("PUT", "/v1/hooks/as-bad", { key, body: { files } });
    assert.equal(answer.status, 422);
    const text = JSON.stringify(answer.body);
    assert.match(text, /Cannot find name 'nope'/);
    assert.match(text, /scripts\/run\.as\.ts/);
    assert.doesNotMatch(text, /hookbox-upload-|\/tmp\//, text);
  });
});

Deno.test("an upload runs the folder's own tests: a failing case is a 422 naming it, passing ones store it", async () => {
  await onService(async (h) => {
    const key = await h.tenant("acme");
    const files = await initGuard();
    assert.equal((await h.call("PUT", "/v1/hooks/guard", { key, body: { files } })).status, 201);
    files["tests/wrong.json"] = JSON.stringify({
      event: { tool_name: "Bash", tool_input: { command: "git push -f" } },
      expect: { decision: "allow" },
    });
    const refused = await h.call("PUT", "/v1/hooks/guard", { key, body: { files } });
    assert.equal(refused.status, 422, JSON.stringify(refused.body));
    assert.match(
      refused.body.error.message,
      /^the hook's own tests fail \(1\): tests\/wrong\.json: /,
    );
    assert.deepEqual(
      refused.body.error.problems.map((p: { code: string; path: string }) => [p.code, p.path]),
      [["HOOK_TEST_FAILED", "tests/wrong.json"]],
    );
    assert.match(refused.body.error.problems[0].message, /decision: expected allow, got block/);
    // Nothing of the refused version was stored.
    assert.equal((await h.call("GET", "/v1/hooks/guard", { key })).body.versions.length, 1);
  });
});

Deno.test("a staged version is stored beside the active one, tested, then made active by a rollback", async () => {
  await onService(async (h) => {
    const key = await h.tenant("acme");
    const files = await initGuard();
    // Staging needs an active version first.
    const early = await h.call("PUT", "/v1/hooks/guard?stage=1", { key, body: { files } });
    assert.equal(early.status, 404, JSON.stringify(early.body));
    assert.match(early.body.error.message, /upload it without \?stage=1 first/);
    const first = await h.call("PUT", "/v1/hooks/guard", { key, body: { files } });
    assert.deepEqual([first.status, first.body.version, first.body.active], [201, 1, true]);
    // Version 2 words its reason differently (its case says so): staged, not active.
    const reworded = {
      ...files,
      "scripts/run.mjs": files["scripts/run.mjs"]!.replace(
        "force pushes are not allowed",
        "no force pushes here",
      ),
      "tests/blocks-force-push.json": files["tests/blocks-force-push.json"]!.replace(
        "force pushes",
        "no force pushes",
      ),
    };
    const staged = await h.call("PUT", "/v1/hooks/guard?stage=1", {
      key,
      body: { files: reworded },
    });
    assert.deepEqual([staged.status, staged.body.version, staged.body.active], [201, 2, false]);
    const push = toolEvent("git push --force");
    const before = await h.call("POST", "/v1/events", { key, body: push });
    assert.equal(before.body.reason, "force pushes are not allowed", "the active version answers");
    const tested = await h.call("POST", "/v1/hooks/guard/versions/2/test", { key });
    assert.equal(tested.status, 200, JSON.stringify(tested.body));
    assert.deepEqual([tested.body.passed, tested.body.cases.length], [true, 1]);
    assert.equal(tested.body.cases[0].file, "tests/blocks-force-push.json");
    assert.equal((await h.call("POST", "/v1/hooks/guard/versions/9/test", { key })).status, 404);
    // A rollback to a staged version makes it active.
    await h.call("POST", "/v1/hooks/guard/rollback", { key, body: { version: 2 } });
    const after = await h.call("POST", "/v1/events", { key, body: push });
    assert.equal(after.body.reason, "no force pushes here");
  });
});

Deno.test("a hook folder whose own tests never finish is refused when the build's time runs out", async () => {
  const builder = createDenoHookBuilder({ compileTimeoutMs: 3000 });
  const md = "---\nname: spin\ndescription: d\ntrigger: pre-tool-call\ntimeout: 600000\n" +
    "limits:\n  fuel: 1000000000000\n---\n";
  // Many cases, each burning the policy's whole fuel: together far past the build's time.
  const spin = JSON.stringify({
    event: { tool_name: "Bash", tool_input: {} },
    expect: { decision: "allow" },
  });
  const files = new Map([
    ["HOOK.md", new TextEncoder().encode(md)],
    ["plugin.wasm", await pluginBytes("loop_forever")],
    ...Array.from(
      { length: 40 },
      (_, i) => [`tests/spin-${i}.json`, new TextEncoder().encode(spin)] as [string, Uint8Array],
    ),
  ]);
  await assert.rejects(builder.build("spin", files), (err) => {
    assert.ok(err instanceof HookRejected, String(err));
    assert.equal(err.problems[0]?.code, "HOOK_TEST_FAILED");
    assert.match(err.problems[0]!.message, /the hook's tests did not finish in 3000 ms/);
    return true;
  });
});

Deno.test("POST /v1/agents/*: a store that stalls cannot hold an agent's call until the agent gives up", async () => {
  // A paused database or a held lock answers nothing, and fails nothing: the call would wait
  // until the agent's own timeout, which lets the action through. It has a deadline instead.
  const lines: Record<string, unknown>[] = [];
  const h = await harness(openSqliteStore(await sqlitePath()), undefined, 0, undefined, {
    agentAnswerMs: 800,
    log: (line) => lines.push(line),
  });
  try {
    const keys: Record<string, string> = {};
    for (const onError of ["closed", "open"]) {
      const key = keys[onError] = await h.tenant(onError);
      const up = await h.call("PUT", "/v1/hooks/guard", {
        key,
        body: await wasmFolder("guard", "guard_wasi", `on_error: ${onError}\n`),
      });
      assert.equal(up.status, 201, JSON.stringify(up.body));
    }
    const claude = {
      session_id: "s",
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "ls" },
    };
    const ask = (key: string) =>
      h.call("POST", "/v1/agents/claude-code/events", { key, body: claude });
    for (const key of Object.values(keys)) assert.equal((await ask(key)).status, 200);
    // The audit's commit never comes back.
    const append = h.store.appendAudit.bind(h.store);
    let resume = () => {};
    const stalled = new Promise<void>((resolve) => resume = resolve);
    h.store.appendAudit = async (rows) => {
      await stalled;
      return await append(rows);
    };
    const [closed, open] = await Promise.all([ask(keys.closed!), ask(keys.open!)]);
    assert.equal(closed.status, 200, JSON.stringify(closed.body));
    assert.equal(closed.body.hookSpecificOutput.permissionDecision, "deny");
    assert.match(
      closed.body.hookSpecificOutput.permissionDecisionReason,
      /could not answer this PreToolUse: ANSWER_TOO_SLOW: .*stalled; hook "guard" guards it/,
    );
    assert.deepEqual([open.status, open.body.error.code], [503, "ANSWER_TOO_SLOW"]);
    assert.match(open.body.error.message, /not ready within 0\.8 s: the store or the server/);
    assert.equal(open.headers.get("retry-after"), "1");
    // Once the store answers, the late decisions are audited, and said to be unsent.
    resume();
    h.store.appendAudit = append;
    await h.service.audit.flush();
    const late = () => lines.filter((l) => l.msg === "agent call answered too late");
    for (let i = 0; i < 100 && late().length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(late().length, 2, JSON.stringify(lines));
    assert.ok(late().every((l) => typeof l.decision_id === "string"), JSON.stringify(late()));
    // The key check never comes back: the tenant the key last named still has its block.
    const lookup = h.store.tenantForKey.bind(h.store);
    h.store.tenantForKey = () => new Promise(() => {});
    const unchecked = await ask(keys.closed!);
    assert.equal(unchecked.status, 200, JSON.stringify(unchecked.body));
    assert.match(
      unchecked.body.hookSpecificOutput.permissionDecisionReason,
      /STORE_UNAVAILABLE: the store did not answer; .*hook "guard" guards it/,
    );
    assert.ok(
      lines.some((l) => String(l.error).includes("did not answer the key check within 100 ms")),
    );
    h.store.tenantForKey = lookup;
    assert.equal((await ask(keys.open!)).status, 200, "the store answers again");
  } finally {
    await h.close();
  }
});

Deno.test("POST /v1/agents/*: a tenant's hooks cannot hold the call until the agent gives up on a platform's closed guard", async () => {
  // One plugin worker, as the server runs chains: the deadline crosses to its thread.
  const h = await harness(openSqliteStore(await sqlitePath()), undefined, 1, undefined, {
    agentEventMs: 300,
  });
  try {
    const key = await h.tenant("acme");
    const guard = await h.call("PUT", "/v1/platform/hooks/guard", {
      body: await wasmFolder("guard", "guard_wasi", "on_error: closed\n"),
    });
    assert.equal(guard.status, 201, JSON.stringify(guard.body));
    // The tenant's hook runs first and loops through 10 billion instructions (about 2 s, and
    // twenty of them past Copilot's 30 s), with a 600 s timeout of its own.
    const spin = await h.call("PUT", "/v1/hooks/spin", {
      key,
      body: await wasmFolder(
        "spin",
        "loop_forever",
        "priority: 1000\ntimeout: 600000\nlimits:\n  fuel: 10000000000\n",
      ),
    });
    assert.equal(spin.status, 201, JSON.stringify(spin.body));
    const res = await h.call("POST", "/v1/agents/claude-code/events", {
      key,
      body: {
        session_id: "s",
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: { command: "ls" },
      },
    });
    assert.equal(res.status, 200);
    // The event's time was spent before the guard's turn: as a closed guard, it blocks.
    const answer = res.body.hookSpecificOutput;
    assert.equal(answer.permissionDecision, "deny");
    assert.match(
      answer.permissionDecisionReason,
      /"guard" failed \(timeout: time: the event's time budget is spent\)/,
    );
  } finally {
    await h.close();
  }
});

Deno.test("a service given the routes it serves mounts those alone; the rest answer 404 NOT_FOUND", async () => {
  const served = new Set([
    "POST /v1/tenants",
    "POST /v1/tenants/{id}/keys",
    "POST /v1/events",
    "GET /healthz",
  ]);
  const h = await harness(openSqliteStore(":memory:"), undefined, 0, undefined, { served });
  try {
    const key = await h.tenant("acme");
    assert.equal((await h.call("GET", "/healthz", { key: null })).status, 200);
    const event = await h.call("POST", "/v1/events", { key, body: toolEvent("ls") });
    assert.deepEqual([event.status, event.body.decision], [200, "allow"]);
    // An admin route (with the admin key) and tenant routes (with the tenant's): not mounted.
    const asked: [string, string, string | undefined][] = [
      ["GET", "/v1/tenants", undefined],
      ["GET", "/v1/hooks", key],
      ["GET", "/v1/audit", key],
    ];
    for (const [method, path, as] of asked) {
      const res = await h.call(method, path, as === undefined ? {} : { key: as });
      assert.deepEqual([res.status, res.body.error?.code], [404, "NOT_FOUND"], `${method} ${path}`);
    }
  } finally {
    await h.close();
  }
});
