/**
 * `hookbox bundle` served by a real workerd (SPEC §7): a store with two
 * tenants is bundled, workerd serves it on loopback, and the Worker answers
 * `POST /v1/events` as the service does — each tenant's own hooks, keys valid
 * at bundle time only (a key revoked before bundling is refused), a runaway
 * plugin stopped by fuel, one audit line per decision.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { writeBundle } from "../../packages/deno/bundle.ts";
import { readRegistry } from "../../packages/edge/worker.ts";
import { openSqliteStore } from "../../packages/store-sqlite/sqlite.ts";
import { ADMIN, harness, toolEvent, wasmFolder } from "../service/_api.ts";
import { startWorkerd } from "../_workerd.ts";
import { tempDir } from "../_helpers.ts";

/** The Worker's code: `worker.js` and the modules it imports on demand. */
async function bundleCode(out: string): Promise<string> {
  const files = [
    "worker.js",
    ...[...Deno.readDirSync(`${out}/chunks`)].map((e) => `chunks/${e.name}`),
  ];
  return (await Promise.all(files.map((f) => Deno.readTextFile(`${out}/${f}`)))).join("\n");
}

async function post(url: string, key: string, event: unknown) {
  const res = await fetch(`${url}/v1/events`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body: JSON.stringify(event),
  });
  return { status: res.status, body: await res.json() };
}

Deno.test("a bundle served by workerd answers events as the service does", async () => {
  const dir = await tempDir("hookbox-bundle-");
  const h = await harness(openSqliteStore(`${dir}/hookbox.db`));
  const keyA = await h.tenant("acme");
  const keyB = await h.tenant("globex");
  const revoked = await h.call("POST", "/v1/tenants/globex/keys", { body: {} });
  await h.call("DELETE", `/v1/tenants/globex/keys/${revoked.body.id}`);
  const put = async (key: string, name: string, plugin: string, extra = "") => {
    const res = await h.call("PUT", `/v1/hooks/${name}`, {
      key,
      body: await wasmFolder(name, plugin, extra),
    });
    assertEquals(res.status, 201, JSON.stringify(res.body));
  };
  await put(keyA, "guard", "guard_wasi");
  // Its own fuel (200 million) is more than its 100 ms timeout's budget at the edge (100 million).
  await put(keyA, "spin", "loop_forever", "timeout: 100\nlimits:\n  fuel: 200000000\n");
  await put(keyB, "blocker", "block_extism", "isolation: warm\n");
  await put(keyB, "later", "guard_wasi", "async: true\n");
  // A hook printing 192 KiB: its answers go out a slice at a time.
  const keyC = await h.tenant("initech");
  await put(keyC, "loud", "big_output");
  // A hook that uses 100 MiB, which its tenant's policy (256 MiB) allows: the service runs it.
  const keyD = await h.tenant("hooli");
  await put(keyD, "grow", "grow_100mib", "limits:\n  memory_mb: 256\n");
  // Hook output that is JSON control: one rewrite, one zod refuses.
  const keyE = await h.tenant("vandelay");
  await put(keyE, "rewrite", "rewrite_wasi");
  await put(keyE, "unsure", "unsure_control_wasi");
  const controlled = await h.call("POST", "/v1/events", { key: keyE, body: toolEvent("ls") });
  const expected = await h.call("POST", "/v1/events", { key: keyA, body: toolEvent("rm -rf /") });
  const grown = await h.call("POST", "/v1/events", { key: keyD, body: toolEvent("ls") });
  assertEquals(grown.body.hooks.map((r: { outcome: string }) => r.outcome), ["ok"]);
  const summary = await writeBundle({ store: h.store, out: `${dir}/out` });
  await h.close();
  assertEquals(summary.tenants.sort(), ["acme", "globex", "hooli", "initech", "vandelay"]);
  // Every wasm hook here asks for more than a Worker gives one (64 MiB by default, "grow" 256).
  assertEquals(summary.memoryLowered, 8);
  // "blocker" has the Extism ABI: the Worker keeps the SDK that loads it.
  ok(!(await bundleCode(`${dir}/out`)).includes("no Extism SDK"), "SDK left out");

  const workerd = await startWorkerd(`${dir}/out`);
  try {
    // zod is loaded on demand in a Worker: hook output that is JSON control, in the isolate's
    // first answer, is read as the service reads it (a rewrite applied, a refused one an error).
    const read = await post(workerd.url, keyE, toolEvent("ls"));
    const outcomes = (body: { hooks: { name: string; outcome: string; code: string }[] }) =>
      body.hooks.map((r) => `${r.name}:${r.outcome}:${r.code}`);
    assertEquals(
      [read.status, read.body.decision, read.body.modified_input, outcomes(read.body)],
      [200, "allow", { command: "ls -la" }, outcomes(controlled.body)],
    );
    ok(outcomes(read.body).includes("unsure:error:OUTPUT_INVALID"), outcomes(read.body)[1]);
    // An invalid event is answered with the field zod names.
    const { session_id: _, ...unnamed } = toolEvent("ls") as Record<string, unknown>;
    const invalid = await post(workerd.url, keyA, unnamed);
    assertEquals(
      [invalid.status, invalid.body.error.code, invalid.body.error.field],
      [400, "EVENT_INVALID", "session_id"],
    );
    const blocked = await post(workerd.url, keyA, toolEvent("rm -rf /"));
    assertEquals(blocked.status, 200);
    assertEquals(
      [blocked.body.decision, blocked.body.reason, blocked.body.blocked_by],
      [expected.body.decision, expected.body.reason, expected.body.blocked_by],
    );
    const allowed = await post(workerd.url, keyA, toolEvent("ls"));
    assertEquals(allowed.body.decision, "allow");
    // A body past one native read is read piece by piece, and still capped.
    const padded = await post(
      workerd.url,
      keyA,
      toolEvent("rm -rf /", { pad: "x".repeat(200_000) }),
    );
    assertEquals([padded.status, padded.body.blocked_by], [200, "guard"]);
    // In a Worker the isolate's 128 MB hold every tenant's requests: a hook gets 32 MiB at most,
    // and one that grows past it ends as a limit, not by ending the isolate.
    const capped = await post(workerd.url, keyD, toolEvent("ls"));
    assertEquals(
      capped.body.hooks.map((r: { outcome: string; code: string }) => `${r.outcome}/${r.code}`),
      ["limit/LIMIT_MEMORY"],
    );
    const loud = await post(workerd.url, keyC, toolEvent("ls"));
    assertEquals(loud.body.hooks[0].stdout.length, (192 * 1024 / 16) * 15);
    const huge = await post(workerd.url, keyA, toolEvent("ls", { pad: "x".repeat(1_100_000) }));
    assertEquals([huge.status, huge.body.error.code], [413, "BODY_TOO_LARGE"]);
    // The runaway plugin is stopped by the fuel derived from its 100 ms timeout (100 million at the
    // edge rate), the chain fails open. A deployed Worker's clock stands still during CPU work, so
    // there only fuel can stop it; a local workerd's clock runs, and on a loaded machine the 100 ms
    // deadline can come first — then the call must still have stayed within that fuel.
    const spin = allowed.body.hooks.find((r: { name: string }) => r.name === "spin");
    if (spin.code === "TIMEOUT") ok(spin.fuel < 110_000_000, `used ${spin.fuel}`);
    else {
      assertEquals([spin.outcome, spin.code], ["limit", "LIMIT_FUEL"]);
      ok(spin.fuel >= 100_000_000 && spin.fuel < 110_000_000, `used ${spin.fuel}`);
    }
    // Tenant globex runs its own hook, not acme's.
    const other = await post(workerd.url, keyB, toolEvent("ls"));
    assertEquals(
      [
        other.body.decision,
        other.body.hooks.map((r: { name: string; outcome: string }) => `${r.name}:${r.outcome}`),
      ],
      ["block", ["blocker:block", "later:async"]],
    );
    // The async hook finished after the answer (kept alive by waitUntil): its record is logged.
    const late = await post(workerd.url, keyB, toolEvent("rm -rf /tmp"));
    assertEquals(late.body.hooks.map((r: { outcome: string }) => r.outcome), ["block", "async"]);
    for (const key of ["wrong-key-0123456789", revoked.body.key]) {
      const refused = await post(workerd.url, key, toolEvent("ls"));
      assertEquals([refused.status, refused.body.error.code], [401, "UNAUTHENTICATED"]);
    }
    const registry = await fetch(`${workerd.url}/v1/hooks`, {
      headers: { authorization: `Bearer ${keyA}` },
    });
    assertEquals([registry.status, (await registry.json()).error.code], [404, "NOT_FOUND"]);
    // The OpenAPI document is the service's; the Worker is built without its generator.
    const openapi = await fetch(`${workerd.url}/openapi.json`);
    assertEquals([openapi.status, (await openapi.json()).error.code], [404, "NOT_FOUND"]);
    const health = await fetch(`${workerd.url}/healthz`);
    assertEquals(health.status, 200);
    await health.body?.cancel();
  } finally {
    await workerd.stop();
  }
  // One audit line per answered decision, with its decision id.
  const lines = workerd.output().split("\n").filter((l) => l.includes('"audit"'));
  ok(lines.length >= 3, workerd.output().slice(0, 2000));
  const asyncLines = workerd.output().split("\n").filter((l) => l.includes('"async"'));
  ok(
    asyncLines.some((l) => l.includes('"name":"later"') && l.includes('"outcome":"block"')),
    asyncLines.join("\n") || workerd.output().slice(0, 2000),
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("hookbox bundle (CLI) writes the Worker, its plugins and both configs; keys only hashed", async () => {
  const dir = await tempDir("hookbox-bundle-cli-");
  const h = await harness(openSqliteStore(`${dir}/hookbox.db`));
  const key = await h.tenant("acme");
  await h.call("PUT", "/v1/hooks/guard", { key, body: await wasmFolder("guard", "guard_wasi") });
  await h.close();
  const cli = new URL("../../packages/cli/main.ts", import.meta.url).pathname;
  const run = (...args: string[]) =>
    new Deno.Command(Deno.execPath(), { args: ["run", "-A", cli, "bundle", ...args] }).output();
  const missing = await run("--db", `${dir}/hookbox.db`);
  assertEquals(missing.code, 1);
  ok(new TextDecoder().decode(missing.stderr).includes("--out DIR is required"));
  const unknown = await run("--db", `${dir}/hookbox.db`, "--out", `${dir}/x`, "--tenant", "nope");
  assertEquals(unknown.code, 1);
  ok(new TextDecoder().decode(unknown.stderr).includes(`no tenant "nope"`));
  const made = await run("--db", `${dir}/hookbox.db`, "--out", `${dir}/out`, "--port", "9999");
  const said = new TextDecoder().decode(made.stderr);
  assertEquals(made.code, 0, said);
  ok(said.includes(`workerd serve ${dir}/out/config.capnp`), said);
  const names = [...Deno.readDirSync(`${dir}/out`)].map((e) => e.name).sort();
  assertEquals(names, [
    "bundle.json",
    "chunks",
    "config.capnp",
    "images.bin",
    "plugins",
    "registry.bin",
    "worker.js",
    "wrangler.toml",
  ]);
  const plugins = [...Deno.readDirSync(`${dir}/out/plugins`)].map((e) => e.name);
  assertEquals(plugins.length, 3, "the guard and the trap and restorer helpers");
  const capnp = await Deno.readTextFile(`${dir}/out/config.capnp`);
  ok(capnp.includes(`address = "127.0.0.1:9999"`) && capnp.includes('(name = "http"'));
  // zod is a module of its own, listed for workerd and wrangler, imported when a request needs it.
  const start = await Deno.readTextFile(`${dir}/out/worker.js`);
  const chunks = [...Deno.readDirSync(`${dir}/out/chunks`)].map((e) => `chunks/${e.name}`);
  const zod = chunks.filter((c) => Deno.readTextFileSync(`${dir}/out/${c}`).includes("ZodError"));
  assertEquals([zod.length, start.includes("ZodError")], [1, false], chunks.join(" "));
  for (const c of chunks) ok(capnp.includes(`(name = "${c}", esModule = embed "${c}")`), c);
  // Tree-shaken: no worker mode, no compiler, no locale but English.
  const worker = await bundleCode(`${dir}/out`);
  ok(!worker.includes("new Worker(") && !worker.includes("esbuild"), "worker mode or a compiler");
  ok(!worker.includes("caractères"), "zod locales (French)");
  // No matcher here needs RE2, so its engine is left out too.
  ok(!worker.includes("invalid nested repetition operator"), "the RE2 engine");
  ok(!worker.includes("3.1.0"), "the OpenAPI generator");
  ok(!worker.includes("signed LEB128 longer than"), "the module rewriter");
  ok(!worker.includes("contains a reference cycle"), "zod's schema compiler");
  // The route groups it does not mount: tenants, hooks, audit, replay.
  const summaries = [
    "Create a tenant",
    "Upload a hook (a new version)",
    "Store audit items posted by edge Workers",
    "Audit items, newest first",
    "Run a version on the tenant's captured events",
  ];
  for (const summary of summaries) ok(!worker.includes(summary), `the route "${summary}…"`);
  // A WASI command alone is a plain instance: no Extism SDK (its export list names CAPABILITIES).
  ok(!worker.includes("CAPABILITIES") && worker.includes("no Extism SDK"), "the Extism SDK");
  for (const file of ["worker.js", "bundle.json"]) {
    ok(!(await Deno.readTextFile(`${dir}/out/${file}`)).includes(key), `${file} holds the key`);
  }
  // The registry is a data module of its own (read on the first request), not text in worker.js.
  const registry = JSON.parse(await Deno.readTextFile(`${dir}/out/bundle.json`));
  assertEquals(await readRegistry(await Deno.readFile(`${dir}/out/registry.bin`)), registry);
  ok(!worker.includes(registry.keys[0].hash), "worker.js holds the registry");
  ok(capnp.includes(`(name = "registry.bin", data = embed "registry.bin")`));
  const toml = await Deno.readTextFile(`${dir}/out/wrangler.toml`);
  ok(toml.includes(`globs = ["images.bin", "registry.bin"]`), toml);
  ok(toml.includes(`type = "ESModule"\nglobs = ["chunks/*.js"]`), toml);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("with --audit-url the Worker posts its audit items to the service, batched, none lost", async () => {
  const dir = await tempDir("hookbox-bundle-audit-");
  const h = await harness(openSqliteStore(`${dir}/hookbox.db`));
  const key = await h.tenant("acme");
  await h.call("PUT", "/v1/hooks/guard", { key, body: await wasmFolder("guard", "guard_wasi") });
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    h.service.app.fetch,
  );
  const ingest = `http://127.0.0.1:${server.addr.port}/v1/audit/ingest`;
  await writeBundle({ store: h.store, out: `${dir}/out`, auditUrl: ingest });
  const capnp = await Deno.readTextFile(`${dir}/out/config.capnp`);
  ok(capnp.includes(`fromEnvironment = "HOOKBOX_AUDIT_KEY"`) && !capnp.includes(ADMIN));
  ok((await Deno.readTextFile(`${dir}/out/wrangler.toml`)).includes("HOOKBOX_AUDIT_URL"));

  const workerd = await startWorkerd(`${dir}/out`, { HOOKBOX_AUDIT_KEY: ADMIN });
  const ids: string[] = [];
  try {
    // 40 events, 8 at a time: rows queue while a post is in flight and go together.
    for (let round = 0; round < 5; round++) {
      const answers = await Promise.all(
        Array.from(
          { length: 8 },
          (_, i) => post(workerd.url, key, toolEvent(i % 2 ? "rm -rf /" : "ls")),
        ),
      );
      for (const a of answers) ids.push(a.body.decision_id);
    }
    const deadline = Date.now() + 15_000;
    let stored: { decision_id: string; decision: string }[] = [];
    while (Date.now() < deadline) {
      stored = (await h.call("GET", "/v1/audit?limit=100", { key })).body.items;
      if (stored.length >= ids.length) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assertEquals(stored.map((i) => i.decision_id).sort(), [...ids].sort());
    assertEquals(stored.filter((i) => i.decision === "block").length, 20);
  } finally {
    await workerd.stop();
    await server.shutdown();
    await h.close();
  }
  ok(!workerd.output().includes('{"audit":'), "delivered rows are not logged as well");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("JS hooks of many tenants and policies share one engine module in a bundle", async () => {
  const dir = await tempDir("hookbox-bundle-js-");
  const h = await harness(openSqliteStore(`${dir}/hookbox.db`));
  // Three tenants, three scripts, three memory caps, fresh and warm.
  const tenants = [
    { id: "small", word: "alpha", policy: { max_memory_mb: 16 }, isolation: "fresh" },
    { id: "medium", word: "beta", policy: { max_memory_mb: 32 }, isolation: "warm" },
    { id: "large", word: "gamma", policy: {}, isolation: "fresh" },
  ];
  const keys = new Map<string, string>();
  for (const t of tenants) {
    const key = await h.tenant(t.id, t.policy);
    keys.set(t.id, key);
    const up = await h.call("PUT", "/v1/hooks/words", {
      key,
      body: {
        files: {
          "HOOK.md": `---\nname: words\ndescription: d\ntrigger: pre-tool-call\n` +
            `isolation: ${t.isolation}\n---\n`,
          // A warm instance restored wrongly would count a second call (or not run at all).
          "scripts/run.js": `const fs = require("fs");\n` +
            `globalThis.calls = (globalThis.calls ?? 0) + 1;\n` +
            `if (globalThis.calls !== 1) { process.stderr.write("state leaked"); process.exit(2); }\n` +
            `const e = JSON.parse(fs.readFileSync(0, "utf8"));\n` +
            `if (e.tool_input.command.includes(${JSON.stringify(t.word)})) {\n` +
            `  process.stderr.write("${t.id} refuses ${t.word}");\n  process.exit(2);\n}\n`,
        },
      },
    });
    assertEquals(up.status, 201, JSON.stringify(up.body));
  }
  const summary = await writeBundle({ store: h.store, out: `${dir}/out` });
  await h.close();
  assertEquals([summary.plugins, summary.modules], [3, 1]);
  const wasm = [...Deno.readDirSync(`${dir}/out/plugins`)]
    .map((e) => Deno.statSync(`${dir}/out/plugins/${e.name}`).size)
    .filter((size) => size > 100_000);
  assertEquals(wasm.length, 1, "one QuickJS engine module for the three hooks");
  // A warm hook among them: the one module tracks writes (its block map imported), so that warm
  // instances restore only the blocks a call wrote; fresh ones run the same module.
  const engine = [...Deno.readDirSync(`${dir}/out/plugins`)]
    .map((e) => Deno.readFileSync(`${dir}/out/plugins/${e.name}`))
    .find((bytes) => bytes.length > 100_000)!;
  assertEquals(
    WebAssembly.Module.imports(new WebAssembly.Module(engine)).filter((i) => i.kind === "memory")
      .map((i) => i.name),
    ["memory", "blocks"],
  );
  const data = JSON.parse(await Deno.readTextFile(`${dir}/out/bundle.json`));
  assertEquals(Object.keys(data.images).length, 3, "three images");
  // Each counts its own runs against the Worker's kept-plugin cap, not the engine they share.
  for (const plugin of Object.values(data.plugins) as { byteLength: number }[]) {
    ok(plugin.byteLength < 64 * 1024, `${plugin.byteLength} bytes of its own`);
  }
  ok(Deno.statSync(`${dir}/out/images.bin`).size < wasm[0]!, "images smaller than the engine");
  const workerd = await startWorkerd(`${dir}/out`);
  try {
    for (const t of tenants) {
      for (const other of tenants) {
        // Three times each: a warm instance answers its later calls as its first.
        for (let i = 0; i < 3; i++) {
          const answer = await post(workerd.url, keys.get(t.id)!, toolEvent(`echo ${other.word}`));
          assertEquals(answer.status, 200, JSON.stringify(answer.body));
          if (other === t) {
            assertEquals([answer.body.decision, answer.body.reason], [
              "block",
              `${t.id} refuses ${t.word}`,
            ]);
          } else assertEquals(answer.body.decision, "allow");
        }
      }
    }
  } finally {
    await workerd.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
