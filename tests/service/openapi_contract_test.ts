/**
 * The contract, exactly: every route's real answers — successes and the
 * errors a client can provoke — validate against the service's own
 * `/openapi.json` (its schema for that route and status, which must exist),
 * on the embedded store.
 */
import assert from "node:assert/strict";
import Ajv2020 from "ajv/dist/2020.js";
import { openSqliteStore } from "../../packages/store-sqlite/sqlite.ts";
import { AGENTS } from "../../packages/agents/adapters.ts";
import { type Harness, harness, toolEvent, wasmFolder } from "./_api.ts";
import { tempDir } from "../_helpers.ts";

type Answer = Awaited<ReturnType<Harness["call"]>>;
interface Seen {
  method: string;
  path: string;
  answer: Answer;
}

/** The document's operation for a concrete path (templates like `/v1/hooks/{name}`). */
function operationOf(doc: Record<string, unknown>, method: string, path: string) {
  const paths = doc.paths as Record<string, Record<string, unknown>>;
  const bare = path.split("?")[0]!;
  for (const [template, ops] of Object.entries(paths)) {
    const re = new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`);
    if (re.test(bare) && ops[method.toLowerCase()]) {
      return { template, op: ops[method.toLowerCase()] as Record<string, unknown> };
    }
  }
  return null;
}

/** The policy's numeric fields at the `maximum` the document gives each. */
function documentedMaxima(doc: Record<string, unknown>): Record<string, number> {
  const text = JSON.stringify(doc);
  const maxima: Record<string, number> = {};
  for (
    const m of text.matchAll(
      /"([a-z_]+)":\{"type":"integer","exclusiveMinimum":0,"maximum":([0-9e+.]+)\}/g,
    )
  ) {
    if (POLICY_NUMBERS.has(m[1]!)) maxima[m[1]!] = Number(m[2]);
  }
  return maxima;
}

const POLICY_NUMBERS = new Set([
  "max_memory_mb",
  "max_fuel",
  "max_output_kb",
  "max_timeout_ms",
  "input_kb",
  "module_kb",
  "max_concurrent",
  "events_per_minute",
  "fuel_per_minute",
  "audit_retention_days",
]);

Deno.test("every route's real answers validate against /openapi.json", async () => {
  const dir = await tempDir("hookbox-contract-");
  let clock = Date.parse("2026-01-01T00:00:00Z");
  const h = await harness(openSqliteStore(`${dir}/hookbox.db`), () => clock);
  const seen: Seen[] = [];
  const call = async (
    method: string,
    path: string,
    options: Parameters<Harness["call"]>[2] = {},
  ) => {
    const answer = await h.call(method, path, options);
    seen.push({ method, path, answer });
    return answer;
  };
  try {
    // Tenants, policies, keys.
    await call("POST", "/v1/tenants", { body: { id: "acme", policy: { fuel_per_minute: 1e12 } } });
    await call("POST", "/v1/tenants", { body: { id: "acme" } }); // 409
    await call("POST", "/v1/tenants", { body: { id: "Not An Id" } }); // 400
    await call("POST", "/v1/tenants", { body: { id: "x" }, key: null }); // 401
    await call("GET", "/v1/tenants");
    await call("GET", "/v1/tenants/acme");
    await call("GET", "/v1/tenants/nope"); // 404
    await call("PUT", "/v1/tenants/acme/policy", {
      body: { max_concurrent: 4, events_per_minute: 1000, fuel_per_minute: 1e12 },
    });
    // Every policy field at the maximum the document states is accepted.
    const maxima = documentedMaxima((await h.call("GET", "/openapi.json", { key: null })).body);
    assert.ok(Object.keys(maxima).length >= 10, JSON.stringify(maxima));
    const atMax = await call("PUT", "/v1/tenants/acme/policy", { body: maxima });
    assert.equal(atMax.status, 200, JSON.stringify(atMax.body));
    await call("PUT", "/v1/tenants/acme/policy", { body: { fuel_per_minute: 1e12 } });
    const created = await call("POST", "/v1/tenants/acme/keys", { body: { name: "ci" } });
    const key = created.body.key as string;
    const spare = await call("POST", "/v1/tenants/acme/keys", { body: {} });
    await call("DELETE", `/v1/tenants/acme/keys/${spare.body.id}`);
    await call("GET", "/v1/tenants/acme/keys");
    await call("GET", "/v1/tenants/nope/keys"); // 404
    await call("PATCH", "/v1/tenants/acme/policy", { body: { events_per_minute: 1000 } });
    await call("PATCH", "/v1/tenants/acme/policy", { body: { max_memory_mb: 0 } }); // 400
    await call("GET", "/v1/tenants/acme/audit?limit=2");
    await call("GET", "/v1/audit?outcome=bogus", { key: spare.body.key }); // 401 (revoked)
    await call("GET", "/v1/tenants", { key }); // 403
    // Hooks.
    await call("PUT", "/v1/hooks/guard", { key, body: await wasmFolder("guard", "guard_wasi") });
    await call("PUT", "/v1/hooks/guard", { key, body: await wasmFolder("guard", "guard_wasi") });
    await call("PUT", "/v1/hooks/bad", { key, body: { files: { "HOOK.md": "no frontmatter" } } });
    await call("PUT", "/v1/hooks/raw", {
      key,
      raw: "{",
      headers: { "content-type": "application/json" },
    });
    await call("GET", "/v1/hooks", { key });
    await call("GET", "/v1/hooks/guard", { key });
    await call("GET", "/v1/hooks/nope", { key }); // 404
    await call("PATCH", "/v1/hooks/guard", { key, body: { enabled: false } });
    await call("PATCH", "/v1/hooks/guard", { key, body: { enabled: true } });
    await call("POST", "/v1/hooks/guard/rollback", { key, body: { version: 1 } });
    await call("PUT", "/v1/hooks/guard?stage=1", {
      key,
      body: await wasmFolder("guard", "guard_wasi"),
    });
    await call("PUT", "/v1/hooks/never?stage=1", {
      key,
      body: await wasmFolder("never", "guard_wasi"),
    }); // 404
    await call("POST", "/v1/hooks/guard/versions/1/test", { key });
    await call("POST", "/v1/hooks/guard/versions/99/test", { key }); // 404
    await call("POST", "/v1/hooks/guard/versions/1/replay", { key });
    await call("POST", "/v1/hooks/guard/versions/1/replay?cursor=forged", { key }); // 400
    await call("PUT", "/v1/hooks/guard/shadow", { key, body: { version: 1 } });
    await call("PUT", "/v1/hooks/guard/shadow", { key, body: { version: 99 } }); // 404
    await call("GET", "/v1/hooks/guard/shadow", { key });
    await call("DELETE", "/v1/hooks/guard/shadow", { key });
    await call("POST", "/v1/hooks/guard/rollback", { key, body: { version: 99 } });
    await call("PUT", "/v1/platform/hooks/base", { body: await wasmFolder("base", "guard_wasi") });
    await call("PUT", "/v1/hooks/base", { key, body: await wasmFolder("base", "guard_wasi") }); // 409
    // Events, agents, audit.
    await call("POST", "/v1/events", { key, body: toolEvent("rm -rf /") });
    await call("POST", "/v1/events?dry_run=1", { key, body: toolEvent("ls") });
    await call("POST", "/v1/events", { key, body: { event_type: "nope", session_id: "s" } });
    await call("POST", "/v1/events", { key, raw: "{" });
    await call("POST", "/v1/events", { key, raw: JSON.stringify({ pad: "x".repeat(200_000) }) });
    for (const agent of AGENTS) {
      await call("POST", `/v1/agents/${agent}/events?event=PreToolUse`, {
        key,
        body: {
          session_id: "s",
          hook_event_name: "PreToolUse",
          event_type: "pre-tool-call",
          tool_name: "Bash",
          tool_input: { command: "ls" },
        },
      });
    }
    await call("POST", "/v1/agents/claude-code/events?form=command", {
      key,
      body: {
        session_id: "s",
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: { command: "rm -rf /" },
      },
    });
    await call("POST", "/v1/agents/nope/events", { key, body: {} });
    await call("GET", "/v1/audit", { key });
    await call("GET", "/v1/audit?limit=1", { key });
    await call("GET", "/v1/audit?outcome=block&since=2026-01-01T00:00:00%2B05:00", { key });
    await call("GET", "/v1/audit?limit=0", { key });
    await call("GET", "/v1/audit/all?limit=1");
    await call("GET", "/v1/audit/all", { key }); // 403
    const decision = seen.find((s) => s.path === "/v1/events")!.answer.body;
    await call("POST", "/v1/audit/ingest", {
      body: {
        items: [{
          tenant_id: "acme",
          item: {
            decision_id: "dec_ingested",
            at: new Date(clock).toISOString(),
            session_id: "s",
            event_type: "pre-tool-call",
            decision: decision.decision,
            reason: null,
            blocked_by: null,
            dry_run: false,
            hooks: [],
          },
        }],
      },
    });
    // Quotas: 429 on the event routes.
    await call("PUT", "/v1/tenants/acme/policy", { body: { events_per_minute: 1 } });
    await call("POST", "/v1/events", { key, body: toolEvent("ls") });
    await call("POST", "/v1/events", { key, body: toolEvent("ls") });
    await call("POST", "/v1/agents/claude-code/events", { key, body: {} });
    clock += 120_000;
    // Public routes and the rest.
    await call("GET", "/healthz", { key: null });
    await call("GET", "/openapi.json", { key: null });
    await call("GET", "/docs", { key: null });
    await call("GET", "/metrics");
    await call("DELETE", "/v1/hooks/guard", { key });
    await call("DELETE", "/v1/platform/hooks/base");
    await call("DELETE", "/v1/tenants/acme");
    // A store that cannot answer: 503 wherever the store is needed.
    await h.store.close();
    await call("GET", "/healthz", { key: null });
    await call("GET", "/v1/tenants");
    await call("POST", "/v1/tenants", { body: { id: "later" } });

    const doc = (await h.call("GET", "/openapi.json", { key: null })).body ?? {};
    const ajv = new (Ajv2020 as unknown as typeof Ajv2020.default)({
      strict: false,
      allErrors: true,
    });
    ajv.addSchema({ $id: "doc", components: doc.components ?? {} });
    const problems: string[] = [];
    for (const { method, path, answer } of seen) {
      const found = operationOf(doc, method, path);
      if (!found) {
        problems.push(`${method} ${path}: no such route in the document`);
        continue;
      }
      const responses = found.op.responses as Record<string, Record<string, unknown>>;
      const response = responses[String(answer.status)];
      if (!response) {
        problems.push(`${method} ${found.template}: ${answer.status} is not documented`);
        continue;
      }
      if (answer.status === 503 && answer.headers.get("retry-after") === null) {
        problems.push(`${method} ${found.template}: a 503 without Retry-After`);
      }
      const content = response.content as Record<string, { schema: unknown }> | undefined;
      const schema = content?.["application/json"]?.schema;
      if (schema === undefined) continue;
      const text = JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/');
      const validate = ajv.compile(JSON.parse(text));
      if (!validate(answer.body)) {
        problems.push(
          `${method} ${found.template} ${answer.status}: ${ajv.errorsText(validate.errors)} in ${
            JSON.stringify(answer.body).slice(0, 300)
          }`,
        );
      }
    }
    assert.deepEqual(problems, []);
    const covered = new Set(seen.map((s) => {
      const found = operationOf(doc, s.method, s.path);
      return found ? `${s.method.toLowerCase()} ${found.template}` : "";
    }));
    const all = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap((
      [template, ops],
    ) => Object.keys(ops).map((m) => `${m} ${template}`));
    assert.deepEqual(all.filter((r) => !covered.has(r)), [], "every documented route is exercised");
  } finally {
    await h.close().catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the document names exactly the routes the service answers", async () => {
  const dir = await tempDir("hookbox-contract-");
  const h = await harness(openSqliteStore(`${dir}/hookbox.db`));
  try {
    const doc = (await h.call("GET", "/openapi.json", { key: null })).body ?? {};
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    // The app's own routing table (Hono keeps it), middleware left out.
    const routes = (h.service.app as unknown as { routes: { method: string; path: string }[] })
      .routes;
    const mounted = [
      ...new Set(
        routes.filter((r) => r.method !== "ALL")
          .map((r) => `${r.method} ${r.path.replaceAll(/:([a-z_]+)/g, "{$1}")}`),
      ),
    ].sort();
    assert.ok(mounted.length >= 22, mounted.join("\n"));
    assert.deepEqual(documented, mounted);
  } finally {
    await h.close();
  }
});

Deno.test("the document has an operationId and a tag per route, and /docs renders it as a page", async () => {
  const dir = await tempDir("hookbox-contract-");
  const h = await harness(openSqliteStore(`${dir}/hookbox.db`));
  try {
    const doc = (await h.call("GET", "/openapi.json", { key: null })).body;
    const ops = Object.entries(doc.paths as Record<string, Record<string, Record<string, unknown>>>)
      .flatMap(([path, byMethod]) => Object.entries(byMethod).map(([m, op]) => ({ path, m, op })));
    const ids = ops.map(({ op }) => op.operationId as string);
    assert.equal(new Set(ids).size, ids.length, "operationIds are unique");
    assert.ok(ids.includes("getHooksName") && ids.includes("postTenantsIdKeys"), ids.join(" "));
    assert.ok(ops.every(({ op }) => (op.tags as string[]).length === 1));
    assert.ok(doc.components.schemas.ErrorCode.enum.includes("QUOTA_EXCEEDED"));
    const page = await h.service.app.request("/docs");
    assert.equal(page.status, 200);
    assert.match(page.headers.get("content-type") ?? "", /^text\/html/);
    const html = await page.text();
    for (const { path, m } of ops) {
      const escaped = path.replaceAll("&", "&#38;");
      assert.ok(html.includes(`${m.toUpperCase()} ${escaped}`), `${m} ${path} on the page`);
    }
    assert.match(html, /<code>QUOTA_EXCEEDED<\/code>/);
    assert.doesNotMatch(html, /<script/);
  } finally {
    await h.close();
  }
});
