/**
 * The HTTP suite of SPEC §6, run on both stores: tenants, keys and auth,
 * uploads and their rejections, versions and rollback, platform hooks,
 * dispatch with its audit, tenant isolation, quotas, and error shapes.
 */
import assert from "node:assert/strict";
import { type AuditRow, type Store, VersionRefused } from "../../packages/store/store.ts";
import { createAuditPoster } from "../../packages/edge/audit_post.ts";
import { MAX_INGEST_BODY } from "../../packages/service/request.ts";
import type { StorageLimits } from "../../packages/service/app.ts";
import { encodeBase64 } from "../_base64.ts";
import { pluginBytes } from "../integration/_plugins.ts";
import { ADMIN, type Harness, harness, hookMd, toolEvent, wasmFolder } from "./_api.ts";

const sha256 = async (bytes: Uint8Array) =>
  [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>))]
    .map((b) => b.toString(16).padStart(2, "0")).join("");

/** Registers the suite for stores made by `open` (fresh per test). */
export function apiSuite(kind: string, open: () => Promise<Store>): void {
  const test = (
    name: string,
    fn: (h: Harness) => Promise<void>,
    workers = 0,
    options: { now?: () => number; storage?: Partial<StorageLimits> } = {},
  ) =>
    Deno.test(`${kind} API: ${name}`, async () => {
      const h = await harness(await open(), options.now, workers, options.storage);
      try {
        await fn(h);
      } finally {
        await h.close();
      }
    });

  test("agent HTTP hooks: each agent's payload in, its own answer out, audited", async (h) => {
    const key = await h.tenant("acme");
    await h.call("PUT", "/v1/hooks/guard", { key, body: await wasmFolder("guard", "guard_wasi") });
    const rules =
      "---\nname: rules\ndescription: d\ntrigger: pre-agent-turn\ninject:\n  role: system\n---\nRun the tests first.\n";
    const up = await h.call("PUT", "/v1/hooks/rules", {
      key,
      body: { files: { "HOOK.md": rules } },
    });
    assert.equal(up.status, 201, JSON.stringify(up.body));
    const agentPost = (agent: string, body: unknown, query = "") =>
      h.call("POST", `/v1/agents/${agent}/events${query}`, { key, body });
    const claude = {
      session_id: "s1",
      cwd: "/repo",
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "rm -rf /" },
      tool_use_id: "toolu_1",
    };
    const deny = await agentPost("claude-code", claude);
    assert.deepEqual([deny.status, deny.body], [200, {
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: "rm -rf is not allowed",
      },
    }]);
    const decision = deny.headers.get("x-hookbox-decision-id");
    assert.ok(decision?.startsWith("dec"));
    const allow = await agentPost("claude-code", { ...claude, tool_input: { command: "ls" } });
    assert.deepEqual([allow.status, allow.body], [200, {}]);
    const context = await agentPost("claude-code", {
      session_id: "s1",
      cwd: "/repo",
      hook_event_name: "UserPromptSubmit",
      prompt: "go",
    });
    assert.equal(context.body.hookSpecificOutput.additionalContext, "Run the tests first.");
    // Copilot's camelCase form names its event in the query.
    const copilot = await agentPost(
      "copilot",
      { sessionId: "s2", cwd: "/repo", toolName: "bash", toolArgs: '{"command":"rm -rf /"}' },
      "?event=preToolUse",
    );
    assert.equal(copilot.body.permissionDecision, "deny");
    const noEvent = await agentPost("copilot", { sessionId: "s2", toolName: "bash" });
    assert.deepEqual([noEvent.status, noEvent.body.error.code], [400, "EVENT_INVALID"]);
    // An agent whose command form blocks by exit code alone gets a JSON deny here.
    const windsurf = await agentPost("windsurf", {
      agent_action_name: "pre_run_command",
      trajectory_id: "t1",
      tool_info: { command_line: "rm -rf /", cwd: "/repo" },
    });
    assert.deepEqual(windsurf.body, { decision: "block", reason: "rm -rf is not allowed" });
    const unknown = await agentPost("vim", claude);
    assert.deepEqual([unknown.status, unknown.body.error.code], [404, "AGENT_UNKNOWN"]);
    const anonymous = await h.call("POST", "/v1/agents/claude-code/events", {
      key: null,
      body: claude,
    });
    assert.equal(anonymous.status, 401);
    // Every dispatched agent event is audited like POST /v1/events.
    await h.service.audit.flush();
    const page = await h.call("GET", "/v1/audit?session_id=s1", { key });
    assert.equal(page.body.items.length, 3);
    assert.ok(page.body.items.some((i: { decision_id: string }) => i.decision_id === decision));
  });

  test("text no store can hold is refused by name, or made storable, the same on every store", async (h) => {
    const key = await h.tenant("acme");
    const other = await h.tenant("other");
    for (const session of ["a\u0000b", "lone \ud800 surrogate", "\udc00"]) {
      const res = await h.call("POST", "/v1/events", {
        key,
        body: toolEvent("ls", { session_id: session }),
      });
      assert.deepEqual([res.status, res.body.error.code, res.body.error.field], [
        400,
        "EVENT_INVALID",
        "session_id",
      ]);
    }
    const policy = await h.call("PUT", "/v1/tenants/acme/policy", {
      body: { allowed_hosts: ["a\u0000.example"] },
    });
    assert.deepEqual([policy.status, policy.body.error.field], [400, "allowed_hosts.0"]);
    const manifest = await h.call("PUT", "/v1/hooks/nul", {
      key,
      body: {
        files: { "HOOK.md": hookMd("nul", 'matcher:\n  pattern: "x\\0y"\n'), "plugin.wasm": "" },
      },
    });
    assert.equal(manifest.status, 422, JSON.stringify(manifest.body));
    assert.match(JSON.stringify(manifest.body), /matcher\.pattern holds a NUL/);
    // A hook whose block reason holds a NUL and a byte that is not UTF-8: its tenant's events are
    // answered and audited, and another tenant's events in the same commits all succeed.
    const up = await h.call("PUT", "/v1/hooks/nul-reason", {
      key,
      body: await wasmFolder("nul-reason", "nul_reason_wasi"),
    });
    assert.equal(up.status, 201, JSON.stringify(up.body));
    const sends = Array.from(
      { length: 20 },
      (_, i) =>
        h.call("POST", "/v1/events", {
          key: i % 2 === 0 ? key : other,
          body: toolEvent(`ls ${i}`),
        }),
    );
    const answers = await Promise.all(sends);
    assert.deepEqual(answers.map((a) => a.status), Array(20).fill(200));
    assert.equal(answers[0]!.body.decision, "block");
    const page = await h.call("GET", "/v1/audit?limit=1", { key });
    assert.equal(page.status, 200);
    assert.equal(page.body.items[0].reason, "bad\ufffdreason\ufffd");
    const query = await h.call("GET", `/v1/audit?session_id=${encodeURIComponent("a\u0000")}`, {
      key,
    });
    assert.deepEqual([query.status, query.body.error.field], [400, "session_id"]);
  });

  test(
    "a tenant's hook cap holds under concurrent uploads",
    async (h) => {
      const key = await h.tenant("acme");
      for (const name of ["h1", "h2"]) {
        const up = await h.call("PUT", `/v1/hooks/${name}`, {
          key,
          body: await wasmFolder(name, "guard_wasi"),
        });
        assert.equal(up.status, 201);
      }
      const names = Array.from({ length: 8 }, (_, i) => `new-${i}`);
      const ups = await Promise.all(
        names.map(async (name) =>
          h.call("PUT", `/v1/hooks/${name}`, { key, body: await wasmFolder(name, "guard_wasi") })
        ),
      );
      assert.equal(ups.filter((u) => u.status === 201).length, 1);
      for (const u of ups.filter((u) => u.status !== 201)) {
        assert.deepEqual([u.status, u.body.error.problems[0].code], [422, "HOOK_TOO_MANY"]);
      }
      const listed = (await h.call("GET", "/v1/hooks", { key })).body.items;
      assert.equal(listed.filter((i: { level: string }) => i.level === "tenant").length, 3);
    },
    0,
    { storage: { hooksPerTenant: 3 } },
  );

  let clock = Date.parse("2026-01-01T00:00:00Z");
  test(
    "a version whose tenant was deleted (and made again) since its upload began is not stored",
    async (h) => {
      await h.tenant("acme");
      const before = (await h.call("GET", "/v1/tenants/acme")).body.created_at as string;
      assert.equal((await h.call("DELETE", "/v1/tenants/acme")).status, 204);
      clock += 1000;
      await h.tenant("acme");
      const version = {
        sha256: "0".repeat(64),
        runtime: "wasm" as const,
        size_bytes: 1,
        manifest: { name: "ghost" } as never,
        body: "",
        built_from: "wasm",
        sources: {},
        created_at: new Date(clock).toISOString(),
        caps: { hooks: 100, bytes: 1 << 30, tenantCreatedAt: before },
      };
      await assert.rejects(
        h.store.addHookVersion("acme", "ghost", version),
        (err: Error) => err instanceof VersionRefused && err.code === "TENANT_GONE",
      );
      assert.equal((await h.store.listHooks("acme")).length, 0);
    },
    0,
    { now: () => clock },
  );

  test("the operator reads every tenant's audit at once, newest first, each item naming its tenant", async (h) => {
    const a = await h.tenant("acme");
    const b = await h.tenant("beta");
    for (const [key, command] of [[a, "ls"], [b, "pwd"], [a, "id"]] as const) {
      assert.equal(
        (await h.call("POST", "/v1/events", { key, body: toolEvent(command) })).status,
        200,
      );
    }
    const all = await h.call("GET", "/v1/audit/all?limit=2");
    assert.equal(all.status, 200, JSON.stringify(all.body));
    assert.deepEqual(all.body.items.map((i: { tenant_id: string }) => i.tenant_id), [
      "acme",
      "beta",
    ]);
    const rest = await h.call("GET", `/v1/audit/all?limit=2&cursor=${all.body.next_cursor}`);
    assert.deepEqual(rest.body.items.map((i: { tenant_id: string }) => i.tenant_id), ["acme"]);
    assert.equal(rest.body.next_cursor, null);
    const filtered = await h.call("GET", "/v1/audit/all?decision=block");
    assert.deepEqual(filtered.body.items, []);
    // A tenant's own read names no tenant; a tenant key cannot read everyone's.
    const own = await h.call("GET", "/v1/audit", { key: b });
    assert.deepEqual([own.body.items.length, own.body.items[0].tenant_id], [1, undefined]);
    const refused = await h.call("GET", "/v1/audit/all", { key: a });
    assert.deepEqual([refused.status, refused.body.error.code], [403, "FORBIDDEN"]);
  });

  test("edge audit ingest: admin only, validated, stored once per decision id", async (h) => {
    const key = await h.tenant("acme");
    const item = (n: number) => ({
      decision_id: `dec-edge-${n}`,
      tenant_id: "acme",
      at: new Date(Date.UTC(2026, 10, 22, 12, 0, n)).toISOString(),
      session_id: "edge-session",
      event_type: "pre-tool-call",
      decision: n % 2 ? "block" : "allow",
      reason: n % 2 ? "blocked at the edge" : null,
      blocked_by: n % 2 ? "guard" : null,
      dry_run: false,
      hooks: [{
        name: "guard",
        level: "tenant",
        version: 1,
        sha256: "ab".repeat(32),
        outcome: n % 2 ? "block" : "ok",
        detail: null,
        duration_ms: 0.2,
        fuel: 1234,
      }],
    });
    const batch = { items: [item(1), item(2), item(3)] };
    const asTenant = await h.call("POST", "/v1/audit/ingest", { key, body: batch });
    assert.deepEqual([asTenant.status, asTenant.body.error.code], [403, "FORBIDDEN"]);
    const bad = await h.call("POST", "/v1/audit/ingest", {
      body: { items: [{ ...item(4), tenant_id: "Not OK" }] },
    });
    assert.deepEqual([bad.status, bad.body.error.field], [400, "items.0.tenant_id"]);
    const empty = await h.call("POST", "/v1/audit/ingest", { body: { items: [] } });
    assert.equal(empty.status, 400);
    const posted = await h.call("POST", "/v1/audit/ingest", { body: batch });
    assert.deepEqual([posted.status, posted.body], [200, { accepted: 3 }]);
    // A Worker that resends a batch (its answer was lost) stores nothing twice.
    const again = await h.call("POST", "/v1/audit/ingest", { body: { items: [item(3), item(4)] } });
    assert.equal(again.status, 200);
    const page = await h.call("GET", "/v1/audit", { key });
    assert.deepEqual(
      page.body.items.map((i: { decision_id: string }) => i.decision_id).sort(),
      ["dec-edge-1", "dec-edge-2", "dec-edge-3", "dec-edge-4"],
    );
    const { tenant_id: _, ...stored } = item(3);
    assert.deepEqual(
      page.body.items.find((i: { decision_id: string }) => i.decision_id === "dec-edge-3"),
      stored,
    );
    // A capturing tenant's Worker sends the event with its row: it is kept for replay.
    const event = JSON.stringify({
      event_type: "pre-tool-call",
      session_id: "s",
      tool_name: "Bash",
    });
    const captured = await h.call("POST", "/v1/audit/ingest", {
      body: { items: [{ ...item(5), event }] },
    });
    assert.equal(captured.status, 200, JSON.stringify(captured.body));
    const kept = await h.store.readCaptures!({ tenant_id: "acme", limit: 10, bytes: 1 << 20 });
    assert.deepEqual(kept.items.map((i) => [i.decision_id, i.event]), [["dec-edge-5", event]]);
  });

  test("an edge Worker's rows reach the store whatever one tenant's rows are like", async (h) => {
    await h.tenant("acme");
    await h.tenant("big");
    const hook = (i: number) => ({
      name: `hook-${String(i).padStart(4, "0")}`,
      level: i === 0 ? "platform" : "tenant",
      version: 1,
      sha256: "cd".repeat(32),
      outcome: "ok",
      code: null,
      detail: null,
      duration_ms: 0.05,
      fuel: 4321,
    });
    const row = (n: number, tenant: string, hooks: number) => ({
      decision_id: `dec-mixed-${n}`,
      tenant_id: tenant,
      at: new Date(Date.UTC(2026, 10, 22, 12, 0, 0, n)).toISOString(),
      session_id: "s",
      event_type: "pre-tool-call",
      decision: "allow" as const,
      reason: null,
      blocked_by: null,
      dry_run: false,
      hooks: Array.from({ length: hooks }, (_, i) => hook(i)),
    });
    // Among 300 small rows of one tenant: 40 of another tenant with its thousand hooks and a
    // platform hook (~190 KB each, 7.6 MB together), and one row the route refuses.
    const rows = Array.from(
      { length: 341 },
      (_, n) =>
        n === 170
          ? { ...row(n, "acme", 1), decision: "maybe" }
          : n % 8 === 0 && n < 320
          ? row(n, "big", 1001)
          : row(n, "acme", 1),
    );
    const lines: string[] = [];
    const posted: number[] = [];
    const poster = createAuditPoster({
      url: "http://service/v1/audit/ingest",
      key: ADMIN,
      fetch: async (request) => {
        const body = await request.arrayBuffer();
        posted.push(body.byteLength);
        return await h.service.app.fetch(new Request(request, { body }));
      },
      log: (line) => lines.push(line),
    });
    poster.push(rows as AuditRow[]);
    await poster.drain();
    assert.equal(poster.queued, 0);
    // Every post fits the route's body; every row but the refused one is stored.
    assert.ok(posted.every((b) => b <= MAX_INGEST_BODY), `${posted}`);
    const stored = new Set<string>();
    let cursor: string | undefined;
    do {
      const page = await h.store.readAudit({
        tenant_id: null,
        limit: 100,
        ...(cursor ? { cursor } : {}),
      });
      for (const item of page.items) stored.add(item.decision_id);
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    assert.equal(stored.size, 340);
    assert.ok(!stored.has("dec-mixed-170"));
    const big = await h.store.readAudit({ tenant_id: "big", limit: 1 });
    assert.equal(big.items[0]?.hooks.length, 1001);
    // The refused row alone is logged, with the route's reason.
    const spilled = lines.map((l) => JSON.parse(l)).filter((l) => l.audit);
    assert.deepEqual(spilled.map((l) => l.audit.decision_id), ["dec-mixed-170"]);
    assert.match(spilled[0].undelivered, /HTTP 400/);
  });

  test("an audit page carries at most 4 MiB of rows: big rows end it early, with a cursor", async (h) => {
    const key = await h.tenant("acme");
    // 100 rows of ~60 KB (a reason of 60,000 characters) through the edge ingest route.
    const item = (n: number) => ({
      decision_id: `dec-big-${n}`,
      tenant_id: "acme",
      at: new Date(Date.UTC(2026, 10, 22, 12, 0, 0, n)).toISOString(),
      session_id: "s",
      event_type: "pre-tool-call",
      decision: "block",
      reason: "r".repeat(60_000),
      blocked_by: "guard",
      dry_run: false,
      hooks: [],
    });
    for (let start = 0; start < 100; start += 50) {
      const items = Array.from({ length: 50 }, (_, i) => item(start + i));
      assert.equal((await h.call("POST", "/v1/audit/ingest", { body: { items } })).status, 200);
    }
    const first = await h.call("GET", "/v1/audit?limit=1000", { key });
    assert.equal(first.status, 200);
    // 4 MiB / 60,001 bytes a row: 69 rows.
    assert.equal(first.body.items.length, 69);
    assert.ok(first.body.next_cursor);
    const rest = await h.call(
      "GET",
      `/v1/audit?limit=1000&cursor=${encodeURIComponent(first.body.next_cursor)}`,
      { key },
    );
    assert.equal(rest.body.items.length, 31);
    assert.equal(rest.body.next_cursor, null);
    const ids = [...first.body.items, ...rest.body.items].map((i: { decision_id: string }) =>
      i.decision_id
    );
    assert.equal(new Set(ids).size, 100);
  });

  test("admin creates, lists, reads, re-policies and deletes tenants", async (h) => {
    const made = await h.call("POST", "/v1/tenants", {
      body: { id: "acme", policy: { max_fuel: 1000000 } },
    });
    assert.equal(made.status, 201);
    assert.equal(made.body.id, "acme");
    assert.deepEqual(made.body.policy, { max_fuel: 1000000 });
    assert.ok(!Number.isNaN(Date.parse(made.body.created_at)));
    const again = await h.call("POST", "/v1/tenants", { body: { id: "acme" } });
    assert.deepEqual([again.status, again.body.error.code], [409, "TENANT_EXISTS"]);
    const bad = await h.call("POST", "/v1/tenants", { body: { id: "Not_OK" } });
    assert.deepEqual([bad.status, bad.body.error.code, bad.body.error.field], [
      400,
      "REQUEST_INVALID",
      "id",
    ]);
    const unknown = await h.call("POST", "/v1/tenants", { body: { id: "x", colour: 1 } });
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.error.message, /colour/);
    assert.deepEqual(
      (await h.call("GET", "/v1/tenants")).body.items.map((t: { id: string }) => t.id),
      ["acme"],
    );
    assert.equal((await h.call("GET", "/v1/tenants/acme")).body.id, "acme");
    assert.equal((await h.call("GET", "/v1/tenants/nope")).body.error.code, "TENANT_NOT_FOUND");
    const policy = { events_per_minute: 10, allowed_hosts: ["api.example.com"] };
    const put = await h.call("PUT", "/v1/tenants/acme/policy", { body: policy });
    assert.deepEqual([put.status, put.body], [200, policy]);
    assert.deepEqual((await h.call("GET", "/v1/tenants/acme")).body.policy, policy);
    const badPolicy = await h.call("PUT", "/v1/tenants/acme/policy", { body: { max_fuel: -1 } });
    assert.deepEqual([badPolicy.status, badPolicy.body.error.field], [400, "max_fuel"]);
    assert.equal((await h.call("DELETE", "/v1/tenants/acme")).status, 204);
    assert.equal((await h.call("DELETE", "/v1/tenants/acme")).status, 404);
  });

  test("keys: missing or wrong is 401, the wrong kind is 403, revoked stops at once", async (h) => {
    const key = await h.tenant("acme");
    assert.match(key, /^hbk_[A-Za-z0-9_-]{43}$/);
    const none = await h.call("GET", "/v1/hooks", { key: null });
    assert.deepEqual([none.status, none.body.error.code], [401, "UNAUTHENTICATED"]);
    assert.equal((await h.call("GET", "/v1/hooks", { key: "hbk_wrong" })).status, 401);
    assert.equal((await h.call("GET", "/v1/hooks", { key })).status, 200);
    const tenantOnAdmin = await h.call("GET", "/v1/tenants", { key });
    assert.deepEqual([tenantOnAdmin.status, tenantOnAdmin.body.error.code], [403, "FORBIDDEN"]);
    const adminOnTenant = await h.call("GET", "/v1/hooks", { key: ADMIN });
    assert.deepEqual([adminOnTenant.status, adminOnTenant.body.error.code], [403, "FORBIDDEN"]);
    const second = await h.call("POST", "/v1/tenants/acme/keys", { body: { name: "ci" } });
    assert.equal(second.status, 201);
    assert.notEqual(second.body.key, key);
    assert.equal((await h.call("DELETE", `/v1/tenants/acme/keys/${second.body.id}`)).status, 204);
    assert.equal((await h.call("GET", "/v1/hooks", { key: second.body.key })).status, 401);
    assert.equal(
      (await h.call("GET", "/v1/hooks", { key })).status,
      200,
      "the other key still works",
    );
    assert.equal((await h.call("DELETE", `/v1/tenants/acme/keys/${second.body.id}`)).status, 404);
    assert.equal((await h.call("POST", "/v1/tenants/nope/keys", { body: {} })).status, 404);
  });

  test("an uploaded plugin blocks, is audited with its version and sha256, and another tenant never sees it", async (h) => {
    const acme = await h.tenant("acme");
    const other = await h.tenant("other");
    const up = await h.call("PUT", "/v1/hooks/no-rm", {
      key: acme,
      body: await wasmFolder("no-rm", "guard_wasi"),
    });
    assert.equal(up.status, 201);
    const plugin = await pluginBytes("guard_wasi");
    assert.deepEqual(up.body, {
      name: "no-rm",
      version: 1,
      sha256: await sha256(plugin),
      runtime: "wasm",
      size_bytes: plugin.byteLength,
      enabled: true,
      built_from: "wasm",
      active: true,
    });
    const blocked = await h.call("POST", "/v1/events", {
      key: acme,
      body: toolEvent("rm -rf /", { tenant_id: "other" }),
    });
    assert.equal(blocked.status, 200);
    assert.equal(blocked.body.decision, "block");
    assert.equal(blocked.body.blocked_by, "no-rm");
    assert.equal(blocked.body.reason, "rm -rf is not allowed");
    assert.match(blocked.body.decision_id, /^dec_/);
    assert.equal(blocked.body.hooks[0].level, "tenant");
    const audit = await h.call("GET", "/v1/audit", { key: acme });
    assert.equal(audit.body.items.length, 1);
    const item = audit.body.items[0];
    assert.equal(item.decision_id, blocked.body.decision_id);
    assert.equal(item.decision, "block");
    assert.equal(item.dry_run, false);
    assert.deepEqual(
      { ...item.hooks[0], duration_ms: 0, fuel: item.hooks[0].fuel > 0 },
      {
        name: "no-rm",
        level: "tenant",
        version: 1,
        sha256: up.body.sha256,
        outcome: "block",
        code: null,
        detail: null,
        duration_ms: 0,
        fuel: true,
      },
    );
    // The other tenant: its events do not run acme's hook, its reads do not see it.
    const theirs = await h.call("POST", "/v1/events", {
      key: other,
      body: toolEvent("rm -rf /", { tenant_id: "acme" }),
    });
    assert.deepEqual([theirs.body.decision, theirs.body.hooks], ["allow", []]);
    for (
      const [method, path, body] of [
        ["GET", "/v1/hooks/no-rm", undefined],
        ["PATCH", "/v1/hooks/no-rm", { enabled: false }],
        ["POST", "/v1/hooks/no-rm/rollback", { version: 1 }],
        ["DELETE", "/v1/hooks/no-rm", undefined],
      ] as const
    ) {
      const res = await h.call(method, path, { key: other, body });
      assert.deepEqual(
        [res.status, res.body.error.code],
        [404, "HOOK_NOT_FOUND"],
        `${method} ${path}`,
      );
    }
    assert.deepEqual((await h.call("GET", "/v1/hooks", { key: other })).body.items, []);
    assert.equal((await h.call("GET", "/v1/audit", { key: other })).body.items.length, 1);
    assert.equal((await h.call("GET", "/v1/audit", { key: acme })).body.items.length, 1);
  });

  test("a block reason of a million characters is answered whole and audited cut to 4,096", async (h) => {
    const acme = await h.tenant("acme");
    const up = await h.call("PUT", "/v1/hooks/loud", {
      key: acme,
      body: await wasmFolder("loud", "huge_reason"),
    });
    assert.equal(up.status, 201);
    const answer = await h.call("POST", "/v1/events", { key: acme, body: toolEvent("ls") });
    assert.equal(answer.body.decision, "block");
    assert.equal(answer.body.reason, "x".repeat(1_000_000));
    const [item] = (await h.call("GET", "/v1/audit", { key: acme })).body.items;
    assert.equal(item.decision_id, answer.body.decision_id);
    assert.equal(item.reason, `${"x".repeat(4096)}… (995904 more characters)`);
  });

  test("a session_id over 1,024 characters is refused before it reaches the audit", async (h) => {
    const acme = await h.tenant("acme");
    const long = await h.call("POST", "/v1/events", {
      key: acme,
      body: toolEvent("ls", { session_id: "s".repeat(1025) }),
    });
    assert.equal(long.status, 400);
    assert.equal(long.body.error.code, "EVENT_INVALID");
    assert.equal(long.body.error.field, "session_id");
    const longest = await h.call("POST", "/v1/events", {
      key: acme,
      body: toolEvent("ls", { session_id: "s".repeat(1024) }),
    });
    assert.equal(longest.status, 200);
    const items = (await h.call("GET", "/v1/audit", { key: acme })).body.items;
    assert.deepEqual(items.map((i: { session_id: string }) => i.session_id.length), [1024]);
  });

  test("versions: each upload is a new version; rollback, disable and delete change what runs", async (h) => {
    const key = await h.tenant("acme");
    await h.call("PUT", "/v1/hooks/guard", { key, body: await wasmFolder("guard", "guard_wasi") });
    const v2 = await h.call("PUT", "/v1/hooks/guard", {
      key,
      body: await wasmFolder("guard", "rewrite_wasi"),
    });
    assert.equal(v2.body.version, 2);
    const decide = async () =>
      (await h.call("POST", "/v1/events", { key, body: toolEvent("rm -rf /") })).body;
    assert.equal((await decide()).decision, "allow", "version 2 rewrites instead of blocking");
    const back = await h.call("POST", "/v1/hooks/guard/rollback", { key, body: { version: 1 } });
    assert.equal(back.status, 200);
    assert.equal(back.body.version, 1);
    assert.equal((await decide()).decision, "block");
    const detail = await h.call("GET", "/v1/hooks/guard", { key });
    assert.deepEqual(detail.body.versions.map((v: { version: number }) => v.version), [1, 2]);
    // The uploaded sources are kept, content-addressed, next to the plugin.
    assert.deepEqual(Object.keys(detail.body.files).sort(), ["HOOK.md", "plugin.wasm"]);
    assert.equal(detail.body.files["plugin.wasm"], detail.body.sha256);
    const md = await h.store.getBlob(detail.body.files["HOOK.md"]);
    assert.equal(new TextDecoder().decode(md!), hookMd("guard"));
    assert.equal(detail.body.version, 1);
    const missing = await h.call("POST", "/v1/hooks/guard/rollback", { key, body: { version: 7 } });
    assert.deepEqual([missing.status, missing.body.error.code], [404, "VERSION_NOT_FOUND"]);
    const off = await h.call("PATCH", "/v1/hooks/guard", { key, body: { enabled: false } });
    assert.deepEqual([off.status, off.body.enabled], [200, false]);
    assert.deepEqual((await decide()).hooks, []);
    await h.call("PATCH", "/v1/hooks/guard", { key, body: { enabled: true } });
    assert.equal((await decide()).decision, "block");
    const list = await h.call("GET", "/v1/hooks", { key });
    assert.deepEqual(list.body.items, [{
      name: "guard",
      level: "tenant",
      version: 1,
      trigger: ["pre-tool-call"],
      priority: 100,
      enabled: true,
      sha256: detail.body.sha256,
    }]);
    assert.equal((await h.call("DELETE", "/v1/hooks/guard", { key })).status, 204);
    assert.deepEqual((await decide()).hooks, []);
    assert.equal((await h.call("GET", "/v1/hooks/guard", { key })).status, 404);
  });

  test("uploads are rejected with every problem coded: name, subprocess, invalid module, import, paths", async (h) => {
    const key = await h.tenant("acme");
    const reject = async (name: string, files: Record<string, unknown>, code: string) => {
      const res = await h.call("PUT", `/v1/hooks/${name}`, { key, body: { files } });
      assert.equal(res.status, 422, `${code}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.code, "HOOK_REJECTED");
      assert.ok(
        res.body.error.problems.some((p: { code: string }) => p.code === code),
        JSON.stringify(res.body),
      );
      for (const p of res.body.error.problems) {
        assert.deepEqual(Object.keys(p).sort(), ["code", "field", "message", "path"]);
      }
      return res.body.error;
    };
    const wasm = { base64: encodeBase64(await pluginBytes("guard_wasi")) };
    const mismatch = await reject(
      "guard",
      { "HOOK.md": hookMd("other"), "plugin.wasm": wasm },
      "HOOK_NAME_MISMATCH",
    );
    assert.equal(mismatch.problems[0].field, "name");
    await reject(
      "sh",
      { "HOOK.md": hookMd("sh"), "scripts/run.sh": "rm -rf /" },
      "SUBPROCESS_DENIED",
    );
    await reject("bad", { "HOOK.md": hookMd("bad"), "plugin.wasm": "not wasm" }, "PLUGIN_INVALID");
    await reject(
      "imp",
      {
        "HOOK.md": hookMd("imp"),
        "plugin.wasm": { base64: encodeBase64(await pluginBytes("bad_import")) },
      },
      "PLUGIN_IMPORT_DENIED",
    );
    await reject("up", { "HOOK.md": hookMd("up"), "../escape.wasm": wasm }, "HOOK_PATH_OUTSIDE");
    await reject("none", { "plugin.wasm": wasm }, "HOOK_MANIFEST_MISSING");
    await reject(
      "yaml",
      { "HOOK.md": "---\nname: [\n---\n", "plugin.wasm": wasm },
      "HOOK_MANIFEST_INVALID",
    );
    const several = await reject(
      "many",
      { "HOOK.md": hookMd("many", "priority: high\ntimeout: 5\n"), "plugin.wasm": wasm },
      "HOOK_MANIFEST_INVALID",
    );
    assert.deepEqual(
      several.problems.map((p: { field: string }) => p.field).sort(),
      ["priority", "timeout"],
      "every bad field is reported",
    );
    const badName = await h.call("PUT", "/v1/hooks/Bad_Name", { key, body: { files: {} } });
    assert.deepEqual([badName.status, badName.body.error.field], [400, "name"]);
    const badB64 = await h.call("PUT", "/v1/hooks/x", {
      key,
      body: { files: { "HOOK.md": { base64: "%%%" } } },
    });
    assert.equal(badB64.status, 400);
    assert.deepEqual(
      (await h.call("GET", "/v1/hooks", { key })).body.items,
      [],
      "nothing was stored",
    );
  });

  test("platform hooks run for every tenant, first, and tenants cannot replace or change them", async (h) => {
    const a = await h.tenant("a");
    const b = await h.tenant("b");
    const up = await h.call("PUT", "/v1/platform/hooks/base-guard", {
      body: await wasmFolder("base-guard", "guard_wasi"),
    });
    assert.equal(up.status, 201);
    assert.equal((await h.call("PUT", "/v1/platform/hooks/x", { key: a, body: {} })).status, 403);
    await h.call("PUT", "/v1/hooks/mine", { key: a, body: await wasmFolder("mine", "guard_wasi") });
    for (const key of [a, b]) {
      const res = await h.call("POST", "/v1/events", { key, body: toolEvent("rm -rf /") });
      assert.equal(res.body.blocked_by, "base-guard");
      assert.equal(res.body.hooks[0].level, "platform");
    }
    const listed = await h.call("GET", "/v1/hooks", { key: a });
    assert.deepEqual(
      listed.body.items.map((i: { name: string; level: string }) => [i.name, i.level]),
      [
        ["base-guard", "platform"],
        ["mine", "tenant"],
      ],
    );
    const replace = await h.call("PUT", "/v1/hooks/base-guard", {
      key: a,
      body: await wasmFolder("base-guard", "rewrite_wasi"),
    });
    assert.deepEqual([replace.status, replace.body.error.code], [409, "HOOK_NAME_CONFLICT"]);
    for (
      const [method, path, body] of [
        ["PATCH", "/v1/hooks/base-guard", { enabled: false }],
        ["POST", "/v1/hooks/base-guard/rollback", { version: 1 }],
        ["DELETE", "/v1/hooks/base-guard", undefined],
      ] as const
    ) {
      const res = await h.call(method, path, { key: a, body });
      assert.deepEqual([res.status, res.body.error.code], [403, "FORBIDDEN"], `${method} ${path}`);
    }
    assert.equal((await h.call("DELETE", "/v1/platform/hooks/base-guard")).status, 204);
    const after = await h.call("POST", "/v1/events", { key: b, body: toolEvent("rm -rf /") });
    assert.equal(after.body.decision, "allow");
  });

  test("dry_run runs the hooks, is audited as such and does not count against quotas", async (h) => {
    const key = await h.tenant("acme", { events_per_minute: 2 });
    await h.call("PUT", "/v1/hooks/guard", { key, body: await wasmFolder("guard", "guard_wasi") });
    for (let i = 0; i < 3; i++) {
      const dry = await h.call("POST", "/v1/events?dry_run=1", {
        key,
        body: toolEvent("rm -rf /"),
      });
      assert.deepEqual([dry.status, dry.body.decision], [200, "block"]);
    }
    const items = (await h.call("GET", "/v1/audit", { key })).body.items;
    assert.deepEqual(items.map((i: { dry_run: boolean }) => i.dry_run), [true, true, true]);
    assert.equal((await h.call("POST", "/v1/events", { key, body: toolEvent("ls") })).status, 200);
    assert.equal((await h.call("POST", "/v1/events", { key, body: toolEvent("ls") })).status, 200);
    const over = await h.call("POST", "/v1/events", { key, body: toolEvent("ls") });
    assert.deepEqual([over.status, over.body.error.code], [429, "QUOTA_EXCEEDED"]);
    const retry = Number(over.headers.get("retry-after"));
    assert.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
    assert.equal(
      (await h.call("GET", "/v1/audit", { key })).body.items.length,
      5,
      "no audit for a refused event",
    );
  });

  test(
    "max_concurrent: a tenant's dispatches beyond it are refused while the others run",
    async (h) => {
      const key = await h.tenant("acme", { max_concurrent: 1 });
      const other = await h.tenant("other", { max_concurrent: 1 });
      const slow = "timeout: 400\nlimits:\n  fuel: 1000000000000\n";
      await h.call("PUT", "/v1/hooks/spin", {
        key,
        body: await wasmFolder("spin", "loop_forever", slow),
      });
      // The second call is sent once the first holds its lease (and spins for 400 ms).
      const leased = Promise.withResolvers<void>();
      const acquire = h.store.acquireLease.bind(h.store);
      h.store.acquireLease = async (...args) => {
        const taken = await acquire(...args);
        if (taken) leased.resolve();
        return taken;
      };
      const first = h.call("POST", "/v1/events", { key, body: toolEvent("ls") });
      await leased.promise;
      const second = await h.call("POST", "/v1/events", { key, body: toolEvent("ls") });
      assert.deepEqual([second.status, second.body.error.code], [429, "QUOTA_EXCEEDED"]);
      assert.equal(second.headers.get("retry-after"), "1");
      // Refused before its body is read: one that is not JSON is refused the same, not a 400.
      for (const path of ["/v1/events", "/v1/agents/claude-code/events"]) {
        const unread = await h.call("POST", path, { key, raw: "{not json" });
        assert.deepEqual([unread.status, unread.body.error.code], [429, "QUOTA_EXCEEDED"], path);
      }
      assert.equal(
        (await h.call("POST", "/v1/events", { key: other, body: toolEvent("ls") })).status,
        200,
      );
      assert.equal((await first).body.hooks[0].outcome, "timeout");
      assert.equal(
        (await h.call("POST", "/v1/events", { key, body: toolEvent("ls") })).status,
        200,
        "freed",
      );
    },
    1,
  ); // plugins on a worker thread, so the event loop serves the second request meanwhile

  test("fuel per minute: once a tenant's hooks have burnt it, events are refused", async (h) => {
    const key = await h.tenant("acme", { fuel_per_minute: 1000 });
    const other = await h.tenant("other", { fuel_per_minute: 1000 });
    await h.call("PUT", "/v1/hooks/guard", { key, body: await wasmFolder("guard", "guard_wasi") });
    const first = await h.call("POST", "/v1/events", { key, body: toolEvent("ls ".repeat(500)) });
    assert.equal(first.status, 200);
    assert.ok(first.body.hooks[0].fuel > 1000, `fuel ${first.body.hooks[0].fuel}`);
    const second = await h.call("POST", "/v1/events", { key, body: toolEvent("ls") });
    assert.deepEqual([second.status, second.body.error.code], [429, "QUOTA_EXCEEDED"]);
    assert.equal(
      (await h.call("POST", "/v1/events", { key: other, body: toolEvent("ls") })).status,
      200,
    );
  });

  test("a tenant's policy is the ceiling of its hooks' limits", async (h) => {
    const key = await h.tenant("acme", { max_fuel: 20_000 });
    await h.call("PUT", "/v1/hooks/guard", {
      key,
      body: await wasmFolder("guard", "guard_wasi", "limits:\n  fuel: 1000000000\n"),
    });
    const res = await h.call("POST", "/v1/events", { key, body: toolEvent("ls ".repeat(3000)) });
    assert.deepEqual([res.body.hooks[0].outcome, res.body.hooks[0].code], ["limit", "LIMIT_FUEL"]);
    await h.call("PUT", "/v1/tenants/acme/policy", { body: {} });
    const after = await h.call("POST", "/v1/events", { key, body: toolEvent("ls ".repeat(3000)) });
    assert.equal(
      after.body.hooks[0].outcome,
      "ok",
      "the hook's own limit applies once the ceiling is lifted",
    );
  });

  test("bad requests: malformed JSON, invalid events, oversized bodies, unknown routes", async (h) => {
    const key = await h.tenant("acme", { input_kb: 4 });
    const malformed = await h.call("POST", "/v1/events", { key, raw: "{not json" });
    assert.deepEqual([malformed.status, malformed.body.error.code], [400, "JSON_INVALID"]);
    const invalid = await h.call("POST", "/v1/events", {
      key,
      body: { event_type: "pre-tool-call", session_id: "s" },
    });
    assert.deepEqual([invalid.status, invalid.body.error.code, invalid.body.error.field], [
      400,
      "EVENT_INVALID",
      "tool_name",
    ]);
    const array = await h.call("POST", "/v1/events", { key, body: [1] });
    assert.equal(array.body.error.code, "EVENT_INVALID");
    const big = await h.call("POST", "/v1/events", { key, body: toolEvent("x".repeat(5000)) });
    assert.deepEqual([big.status, big.body.error.code], [413, "BODY_TOO_LARGE"]);
    const deep = await h.call("POST", "/v1/events", {
      key,
      raw: `{"event_type":"stop","session_id":"s","x":${"[".repeat(100)}${"]".repeat(100)}}`,
    });
    assert.deepEqual([deep.status, deep.body.error.code], [400, "JSON_TOO_DEEP"]);
    const route = await h.call("GET", "/v1/nothing", { key });
    assert.deepEqual([route.status, route.body.error.code], [404, "NOT_FOUND"]);
    const hugeUpload = await h.call("PUT", "/v1/hooks/x", {
      key,
      raw: "x".repeat(17 * 1024 * 1024),
    });
    assert.deepEqual([hugeUpload.status, hugeUpload.body.error.code], [413, "BODY_TOO_LARGE"]);
    for (const res of [malformed, invalid, big, route]) {
      assert.deepEqual(Object.keys(res.body), ["error"]);
      assert.equal(typeof res.body.error.message, "string");
      assert.doesNotMatch(JSON.stringify(res.body), /at .*\.ts:\d+/, "no stack trace");
    }
  });

  test("audit reads filter, paginate with a cursor and refuse a forged one", async (h) => {
    const key = await h.tenant("acme");
    await h.call("PUT", "/v1/hooks/guard", { key, body: await wasmFolder("guard", "guard_wasi") });
    for (let i = 0; i < 7; i++) {
      const command = i % 3 === 0 ? "rm -rf /" : "ls";
      await h.call("POST", "/v1/events", {
        key,
        body: toolEvent(command, { session_id: `s${i % 2}` }),
      });
    }
    const page1 = await h.call("GET", "/v1/audit?limit=3", { key });
    assert.equal(page1.body.items.length, 3);
    const page2 = await h.call("GET", `/v1/audit?limit=3&cursor=${page1.body.next_cursor}`, {
      key,
    });
    const page3 = await h.call("GET", `/v1/audit?limit=3&cursor=${page2.body.next_cursor}`, {
      key,
    });
    assert.equal(page3.body.items.length, 1);
    assert.equal(page3.body.next_cursor, null);
    const all = [...page1.body.items, ...page2.body.items, ...page3.body.items];
    assert.equal(new Set(all.map((i) => i.decision_id)).size, 7);
    assert.ok(all.every((x, i) => i === 0 || all[i - 1].at >= x.at), "newest first");
    assert.equal((await h.call("GET", "/v1/audit?decision=block", { key })).body.items.length, 3);
    assert.equal((await h.call("GET", "/v1/audit?session_id=s1", { key })).body.items.length, 3);
    assert.equal(
      (await h.call("GET", "/v1/audit?hook=guard&outcome=block", { key })).body.items.length,
      3,
    );
    const none = await h.call("GET", "/v1/audit?event_type=pre-agent-turn-stop", { key });
    assert.equal(none.body.items.length, 0);
    assert.equal((await h.call("GET", "/v1/audit?event_type=stop", { key })).status, 400);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    assert.equal((await h.call("GET", `/v1/audit?since=${future}`, { key })).body.items.length, 0);
    // `since` is an instant: the same moment with another offset gives the same page.
    const oldest = all.at(-1)!.at as string;
    const at = (offsetHours: number) => {
      const shifted = new Date(Date.parse(oldest) + offsetHours * 3_600_000).toISOString();
      const sign = offsetHours < 0 ? "-" : "+";
      const hh = String(Math.abs(offsetHours)).padStart(2, "0");
      return encodeURIComponent(`${shifted.slice(0, -1)}${sign}${hh}:00`);
    };
    for (const offset of [5, -5, 0]) {
      const page = await h.call("GET", `/v1/audit?since=${at(offset)}&limit=100`, { key });
      assert.equal(page.body.items.length, 7, `since with offset ${offset}`);
    }
    const forged = await h.call("GET", "/v1/audit?cursor=abc", { key });
    assert.deepEqual([forged.status, forged.body.error.code], [400, "CURSOR_INVALID"]);
    const badLimit = await h.call("GET", "/v1/audit?limit=5000", { key });
    assert.deepEqual([badLimit.status, badLimit.body.error.field], [400, "limit"]);
    const badSince = await h.call("GET", "/v1/audit?since=yesterday", { key });
    assert.deepEqual([badSince.status, badSince.body.error.field], [400, "since"]);
  });

  test("health, metrics (admin only) and the OpenAPI document", async (h) => {
    const key = await h.tenant("acme");
    await h.call("POST", "/v1/events", { key, body: toolEvent("ls") });
    const health = await h.call("GET", "/healthz", { key: null });
    assert.deepEqual([health.status, health.body.status], [200, "ok"]);
    assert.equal((await h.call("GET", "/metrics", { key })).status, 403);
    const metrics = await h.call("GET", "/metrics");
    assert.equal(metrics.status, 200);
    assert.match(
      metrics.body,
      /hookbox_dispatches_total\{tenant="acme",decision="allow",dry_run="false"\} 1/,
    );
    assert.match(metrics.body, /hookbox_decision_seconds_bucket/);
    const doc = await h.call("GET", "/openapi.json", { key: null });
    assert.equal(doc.body.openapi, "3.1.0");
    for (const path of ["/v1/tenants", "/v1/hooks/{name}", "/v1/events", "/v1/audit", "/healthz"]) {
      assert.ok(doc.body.paths[path], `${path} is documented`);
    }
    assert.ok(doc.body.paths["/v1/events"].post.requestBody);
  });

  test("operators list a tenant's keys, read its audit and change some of its policy", async (h) => {
    const key = await h.tenant("acme", { max_concurrent: 4, events_per_minute: 100 });
    const spare = await h.call("POST", "/v1/tenants/acme/keys", { body: { name: "ci" } });
    await h.call("DELETE", `/v1/tenants/acme/keys/${spare.body.id}`);
    // Keys: live and revoked, never the key or its hash.
    const keys = await h.call("GET", "/v1/tenants/acme/keys");
    assert.equal(keys.status, 200);
    assert.equal(keys.body.items.length, 2);
    assert.deepEqual(Object.keys(keys.body.items[0]).sort(), [
      "created_at",
      "id",
      "name",
      "revoked_at",
    ]);
    const revoked = keys.body.items.find((k: { id: string }) => k.id === spare.body.id);
    assert.equal(revoked.name, "ci");
    assert.match(revoked.revoked_at, /^\d{4}-/);
    assert.ok(!JSON.stringify(keys.body).includes(key), "the key itself is never listed");
    assert.equal((await h.call("GET", "/v1/tenants/acme/keys", { key })).status, 403);
    assert.equal((await h.call("GET", "/v1/tenants/nope/keys")).status, 404);
    // PATCH changes the fields sent; null removes one; PUT still replaces the whole policy.
    const patched = await h.call("PATCH", "/v1/tenants/acme/policy", {
      body: { events_per_minute: 50, max_concurrent: null, max_memory_mb: 32 },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.deepEqual(patched.body, { events_per_minute: 50, max_memory_mb: 32 });
    assert.deepEqual((await h.call("GET", "/v1/tenants/acme")).body.policy, patched.body);
    const bad = await h.call("PATCH", "/v1/tenants/acme/policy", { body: { max_memory_mb: 0 } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.field, "max_memory_mb");
    // The operator reads the tenant's audit with the same filters and pages.
    await h.call("POST", "/v1/events", { key, body: toolEvent("ls") });
    const page = await h.call("GET", "/v1/tenants/acme/audit?limit=5");
    assert.equal(page.status, 200);
    assert.equal(page.body.items.length, 1);
    assert.equal((await h.call("GET", "/v1/tenants/acme/audit", { key })).status, 403);
  });

  test("audit filters outside their values are refused by name, not answered with nothing", async (h) => {
    const key = await h.tenant("acme");
    for (
      const [query, field] of [["outcome=bogus", "outcome"], ["event_type=nope", "event_type"]]
    ) {
      const answer = await h.call("GET", `/v1/audit?${query}`, { key });
      assert.equal(answer.status, 400, query);
      assert.equal(answer.body.error.code, "REQUEST_INVALID");
      assert.equal(answer.body.error.field, field);
    }
    assert.equal((await h.call("GET", "/v1/audit?outcome=limit", { key })).status, 200);
  });
}
