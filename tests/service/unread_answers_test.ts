/**
 * A tenant's clients that ask for big answers and never read them cannot make
 * the server hold more than the tenant's allowance: past it, its requests are
 * refused until they read (`packages/service/unread_answers.ts`).
 */
import assert from "node:assert/strict";
import { openSqliteStore } from "../../packages/store-sqlite/sqlite.ts";
import { harness, toolEvent, wasmFolder } from "./_api.ts";

const ALLOWANCE = 1024 * 1024;

/** A service whose tenant "acme" has a hook printing 192 KiB (answers of ~230 KB). */
async function loudTenant() {
  const dir = await Deno.makeTempDir({ prefix: "hookbox-unread-" });
  const h = await harness(openSqliteStore(`${dir}/hookbox.db`), undefined, 0, undefined, {
    unreadAnswerBytes: ALLOWANCE,
  });
  const key = await h.tenant("acme");
  const quiet = await h.tenant("globex");
  const up = await h.call("PUT", "/v1/hooks/loud", {
    key,
    body: await wasmFolder("loud", "big_output"),
  });
  assert.equal(up.status, 201, JSON.stringify(up.body));
  const send = (as = key) =>
    h.service.app.request("/v1/events", {
      method: "POST",
      headers: { authorization: `Bearer ${as}` },
      body: JSON.stringify(toolEvent("ls")),
    });
  return { h, key, quiet, send };
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
    assert.match(error.message, /unread answers.*read them, or close those connections/);
    // Every route of the tenant's, not only events; no other tenant.
    assert.equal((await h.call("GET", "/v1/hooks", { key })).status, 429);
    assert.equal((await send(quiet)).status, 200);

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
