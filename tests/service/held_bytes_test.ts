/**
 * A tenant's requests cannot make the server hold more than the tenant's
 * allowance, in bodies still arriving or in big answers its clients leave
 * unread: past it, its requests are refused (`packages/service/held_bytes.ts`).
 */
import assert from "node:assert/strict";
import { openSqliteStore } from "../../packages/store-sqlite/sqlite.ts";
import { createEventCodec } from "../../packages/deno/serve/event_codec.ts";
import { type Harness, harness, toolEvent, wasmFolder } from "./_api.ts";
import type { ServerDeps } from "../../packages/service/app.ts";
import { HeldBytes } from "../../packages/service/held_bytes.ts";
import { concatBytes } from "../../packages/core/bytes.ts";
import { Hono } from "hono";
import { tempDir } from "../_helpers.ts";

const ALLOWANCE = 1024 * 1024;

/** A service on a fresh SQLite store, with `more` of `createService`'s options. */
async function service(more: Partial<ServerDeps>): Promise<Harness> {
  const dir = await tempDir("hookbox-held-");
  return await harness(openSqliteStore(`${dir}/hookbox.db`), undefined, 0, undefined, more);
}

/** Uploads `plugin` of the corpus as `key`'s hook `name`. */
async function upload(h: Harness, key: string, name: string, plugin: string) {
  const up = await h.call("PUT", `/v1/hooks/${name}`, {
    key,
    body: await wasmFolder(name, plugin),
  });
  assert.equal(up.status, 201, JSON.stringify(up.body));
}

/** Sends one event of `key`'s; the answer is left for the caller to read (or not). */
function send(h: Harness, key: string): Promise<Response> {
  return Promise.resolve(h.service.app.request("/v1/events", {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body: JSON.stringify(toolEvent("ls")),
  }));
}

/** A service whose tenant "acme" has a hook printing 192 KiB (answers of ~230 KB). */
async function loudTenant() {
  const h = await service({ tenantHeldBytes: ALLOWANCE });
  const key = await h.tenant("acme");
  const quiet = await h.tenant("globex");
  await upload(h, key, "loud", "big_output");
  return { h, key, quiet, send: (as = key) => send(h, as) };
}

Deno.test("a tenant whose clients leave its big answers unread is refused past its allowance, and served again once they read", async () => {
  const { h, key, quiet, send } = await loudTenant();
  try {
    // Answers of ~230 KB each, none read: four stay under 1 MiB, the fifth crosses it.
    const unread: Response[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await send();
      assert.equal(res.status, 200);
      unread.push(res);
    }
    const refused = await send();
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get("retry-after"), "1");
    const error = (await refused.json()).error;
    assert.equal(error.code, "QUOTA_EXCEEDED");
    assert.match(
      error.message,
      /answers not yet read.*read the answers, or close those connections/,
    );
    // Every route of the tenant's, not only events; no other tenant.
    assert.equal((await h.call("GET", "/v1/hooks", { key })).status, 429);
    assert.equal((await send(quiet)).status, 200);

    // Operators see it: the process's held bytes, five answers of ~230 KB.
    const metrics = await h.call("GET", "/metrics", {});
    const held = Number(/^hookbox_held_bytes (\d+)$/m.exec(String(metrics.body))?.[1]);
    assert.ok(held > 5 * 200_000 && held < 5 * 300_000, `hookbox_held_bytes ${held}`);
    // Read whole, an answer frees its bytes: the tenant is served again.
    const answer = await unread.pop()!.json();
    // 192 KiB of a 16-byte pattern of 15 characters (one of them two bytes in UTF-8), whole.
    assert.equal(answer.hooks[0].stdout.length, (192 * 1024 / 16) * 15);
    const again = await send();
    assert.equal(again.status, 200);
    unread.push(again);
    assert.equal((await send()).status, 429);
    // A client that goes away frees its answer too.
    await unread.pop()!.body!.cancel();
    const third = await send();
    assert.equal(third.status, 200);
    for (const res of [...unread, third]) await res.body?.cancel();
    assert.equal((await h.call("GET", "/v1/hooks", { key })).status, 200);
  } finally {
    await h.close();
  }
});

Deno.test("an agent's call refused for what its tenant holds is the agent's block where a closed guard applies", async () => {
  // A 429 is the agent's non-blocking error: the tenant's unread answers would switch its
  // agents' guards off. The payload is not read (that is what the refusal saves).
  const { h, key, send } = await loudTenant();
  try {
    const guard = await h.call("PUT", "/v1/hooks/guard", {
      key,
      body: await wasmFolder("guard", "guard_wasi", "on_error: closed\n"),
    });
    assert.equal(guard.status, 201, JSON.stringify(guard.body));
    const unread: Response[] = [];
    for (let i = 0; i < 5; i++) unread.push(await send());
    assert.equal((await send()).status, 429);
    const ask = (query = "") =>
      h.call("POST", `/v1/agents/claude-code/events${query}`, {
        key,
        body: { session_id: "s", hook_event_name: "PreToolUse", tool_name: "Bash" },
      });
    const http = await ask("?event=PreToolUse");
    assert.equal(http.status, 200, JSON.stringify(http.body));
    assert.equal(http.body.hookSpecificOutput.permissionDecision, "deny");
    assert.match(
      http.body.hookSpecificOutput.permissionDecisionReason,
      /could not answer this PreToolUse: QUOTA_EXCEEDED: .*hook "guard" guards it/,
    );
    const command = await ask("?form=command");
    assert.deepEqual([command.status, command.body.exit_code], [200, 2]);
    assert.match(command.body.stderr, /QUOTA_EXCEEDED: .*hook "guard" guards it/);
    for (const res of unread) await res.body?.cancel();
    assert.equal((await ask()).status, 200, "served again once the answers are read");
  } finally {
    await h.close();
  }
});

Deno.test("big answers made for requests sent at once are dropped past the allowance, not held", async () => {
  const { h, send } = await loudTenant();
  try {
    // All ten pass the check on arrival; the answers made once five are unread are refused.
    const answers = await Promise.all(Array.from({ length: 10 }, () => send()));
    const statuses = answers.map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429, 429, 429, 429]);
    for (const res of answers) {
      if (res.status === 429) assert.equal((await res.json()).error.code, "QUOTA_EXCEEDED");
      else await res.body?.cancel();
    }
  } finally {
    await h.close();
  }
});

/**
 * A request whose body sends `first` bytes and then waits; `counted` settles
 * once the server has read (and counted) them and asked for more.
 */
function stalledBody(h: Harness, key: string, first: number) {
  let asked = 0;
  let counted!: () => void;
  const seen = new Promise<void>((resolve) => counted = resolve);
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => finish = resolve);
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (++asked === 1) return controller.enqueue(new Uint8Array(first).fill(0x20));
      counted();
      await finished;
      controller.enqueue(new TextEncoder().encode(JSON.stringify(toolEvent("ls"))));
      controller.close();
    },
  });
  const answer = Promise.resolve(h.service.app.request("/v1/events", {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body,
    duplex: "half",
  } as RequestInit));
  return { seen, finish, answer };
}

Deno.test("a tenant's bodies still arriving count against its allowance: the one that reaches it is refused unread", async () => {
  const { h, key, quiet, send } = await loudTenant();
  try {
    // Two bodies of 400 KB each arrive and wait (leading spaces: valid JSON once finished).
    const one = stalledBody(h, key, 400_000);
    await one.seen;
    const two = stalledBody(h, key, 400_000);
    await two.seen;
    // The third brings the tenant past 1 MiB: refused, without waiting for the rest of it.
    const three = stalledBody(h, key, 400_000);
    const refused = await three.answer;
    assert.equal(refused.status, 429);
    assert.match((await refused.json()).error.message, /bodies still arriving/);
    assert.equal((await send(quiet)).status, 200);
    // Finished and answered, the first two hold nothing any more.
    one.finish();
    two.finish();
    for (const { answer } of [one, two]) {
      const res = await answer;
      assert.equal(res.status, 200);
      await res.body?.cancel();
    }
    const after = await send();
    assert.equal(after.status, 200);
    await after.body?.cancel();
  } finally {
    await h.close();
  }
});

Deno.test("past the server's allowance, a tenant holding its even share is refused and the others are served", async () => {
  const h = await service({ tenantHeldBytes: 8 * ALLOWANCE, serverHeldBytes: ALLOWANCE });
  try {
    const keys: Record<string, string> = {};
    for (const id of ["acme", "initech", "globex"]) keys[id] = await h.tenant(id);
    for (const id of ["acme", "initech"]) await upload(h, keys[id]!, "loud", "big_output");
    const sendAs = (id: string) => send(h, keys[id]!);
    // ~230 KB answers left unread: acme three, initech two (1.15 MB in all, over 1 MiB).
    const unread: Response[] = [];
    for (const id of ["acme", "acme", "acme", "initech", "initech"]) {
      const res = await sendAs(id);
      assert.equal(res.status, 200);
      unread.push(res);
    }
    // The even share is 512 KiB: acme holds more, initech less, globex nothing.
    const acme = await sendAs("acme");
    assert.equal(acme.status, 429);
    assert.match((await acme.json()).error.message, /less while the server holds 1\.0 MiB/);
    const initech = await sendAs("initech");
    assert.notEqual(initech.status, 429);
    await initech.body?.cancel();
    assert.equal((await h.call("GET", "/v1/hooks", { key: keys.globex! })).status, 200);
    for (const res of unread) await res.body?.cancel();
    const again = await sendAs("acme");
    assert.equal(again.status, 200);
    await again.body?.cancel();
  } finally {
    await h.close();
  }
});

Deno.test("answers too small for the event codec but over 16 KiB count too", async () => {
  const codec = createEventCodec();
  const h = await service({ tenantHeldBytes: 100 * 1024, eventCodec: codec });
  try {
    const key = await h.tenant("acme");
    await upload(h, key, "mid", "mid_output");
    // Answers of ~41 KB, written in place (under the codec's 64 KiB), left unread.
    const unread: Response[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await send(h, key);
      assert.equal(res.status, 200);
      unread.push(res);
    }
    assert.equal((await send(h, key)).status, 429);
    const answer = await unread[0]!.json();
    assert.equal(answer.hooks[0].stdout.length, 40 * 1024);
    for (const res of unread.slice(1)) await res.body?.cancel();
  } finally {
    await h.close();
    codec.close();
  }
});

Deno.test("the OpenAPI document is written once, and what anyone leaves unread of it counts as a tenant's would", async () => {
  const h = await service({ tenantHeldBytes: 100 * 1024 });
  try {
    const get = (path: string) => h.service.app.request(path);
    const first = await get("/openapi.json");
    const second = await get("/openapi.json");
    assert.deepEqual([first.status, second.status], [200, 200]);
    // Two documents of ~76 KB unread pass 100 KiB: the next is refused, and so is the page.
    const refused = await get("/openapi.json");
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get("retry-after"), "1");
    assert.equal((await get("/docs")).status, 429);
    const text = await first.text();
    assert.equal(JSON.parse(text).openapi.startsWith("3."), true);
    assert.equal(await second.text(), text);
    const page = await get("/docs");
    assert.equal(page.status, 200);
    assert.match(page.headers.get("content-type") ?? "", /^text\/html/);
    assert.match(await page.text(), /<html/i);
  } finally {
    await h.close();
  }
});

Deno.test("HEAD requests for big answers hold nothing: neither anyone nor a tenant is refused for them", async () => {
  const h = await service({ tenantHeldBytes: 100 * 1024 });
  try {
    const key = await h.tenant("acme");
    await upload(h, key, "reasons", "huge_reason");
    for (let i = 0; i < 5; i++) await (await send(h, key)).arrayBuffer();
    const auth = { authorization: `Bearer ${key}` };
    for (const [path, headers] of [["/openapi.json", {}], ["/v1/audit", auth]] as const) {
      const length = (await (await h.service.app.request(path, { headers })).arrayBuffer())
        .byteLength;
      assert.ok(length > 16 * 1024, `${path}: ${length} bytes, too small to be counted`);
      // Ten HEADs of a counted answer, each over a tenth of the allowance: none is held.
      for (let i = 0; i < 10; i++) {
        const head = await h.service.app.request(path, { method: "HEAD", headers });
        assert.equal(head.status, 200, `${path}: HEAD ${i + 1}`);
        assert.equal(head.headers.get("content-length"), String(length));
        assert.equal(head.body, null);
      }
      const get = await h.service.app.request(path, { headers });
      assert.equal(get.status, 200, path);
      await get.arrayBuffer();
    }
    const metrics = await h.call("GET", "/metrics", {});
    assert.match(String(metrics.body), /^hookbox_held_bytes 0$/m);
  } finally {
    await h.close();
  }
});

Deno.test("an answer given in pieces is written whole, in order, without joining them, and counted until read", async () => {
  const held = new HeldBytes();
  const piece = (length: number, byte: number) => new Uint8Array(length).fill(byte);
  // Empty pieces, pieces across the 256 KiB slices, one of a single byte.
  const pieces = [piece(3, 65), piece(0, 0), piece(600 * 1024, 66), piece(0, 0), piece(1, 67)];
  pieces.push(piece(300 * 1024, 68), piece(0, 0));
  const app = new Hono().get("/", (c) => held.json(c, "acme", pieces));
  const res = await app.request("/");
  const length = pieces.reduce((n, p) => n + p.byteLength, 0);
  assert.equal(res.headers.get("content-length"), String(length));
  assert.equal(held.held("acme"), length, "counted while unread");
  const slices: Uint8Array[] = [];
  for await (const slice of res.body!) slices.push(slice);
  assert.ok(slices.every((s) => s.byteLength > 0 && s.byteLength <= 256 * 1024));
  // The big pieces' own bytes go out: views of them, not copies.
  assert.ok(slices.some((s) => s.buffer === pieces[2]!.buffer));
  const whole = new Uint8Array(length);
  let at = 0;
  for (const slice of slices) whole.set(slice, (at += slice.byteLength) - slice.byteLength);
  assert.deepEqual(whole, concatBytes(pieces, length));
  assert.equal(held.held("acme"), 0, "released once read");
});
