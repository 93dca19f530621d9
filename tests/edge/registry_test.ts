/**
 * A bundle's registry travels as `registry.bin` (JSON, deflate-raw), read on
 * the Worker's first request rather than parsed while the Worker starts: the
 * Worker serves from it, and a registry it cannot read answers every request
 * with a coded `500` naming why, never a crash or a half-built Worker.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { deflateRawSync } from "node:zlib";
import { createEdgeWorker, readRegistry } from "../../packages/edge/worker.ts";
import { emptyBundle } from "./_bundle.ts";
import { hashKey } from "../../packages/service/auth.ts";
import { toolEvent } from "../service/_api.ts";

const KEY = `hbk_${"k".repeat(43)}`;

async function fixture() {
  const { data, modules } = await emptyBundle();
  data.tenants.push({ id: "acme", policy: {}, created_at: "2026-11-29T00:00:00Z" });
  data.keys.push({ hash: await hashKey(KEY), tenant_id: "acme" });
  return { data, modules };
}

const deflated = (value: unknown) =>
  deflateRawSync(new TextEncoder().encode(JSON.stringify(value)));

const event = () =>
  new Request("http://edge/v1/events", {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify(toolEvent("ls")),
  });

Deno.test("a Worker given registry.bin's bytes serves its tenants from them", async () => {
  const { data, modules } = await fixture();
  assertEquals(await readRegistry(deflated(data)), data);
  const worker = createEdgeWorker(deflated(data), modules, { audit: () => Promise.resolve() });
  // Requests that come before the registry is read wait for it, together.
  const [health, answer] = await Promise.all([
    worker.fetch(new Request("http://edge/healthz")),
    worker.fetch(event()),
  ]);
  assertEquals(health.status, 200);
  await health.body?.cancel();
  const body = await answer.json();
  assertEquals([answer.status, body.decision], [200, "allow"], JSON.stringify(body));
  const refused = await worker.fetch(
    new Request("http://edge/v1/events", {
      method: "POST",
      headers: { authorization: `Bearer hbk_${"n".repeat(43)}` },
      body: "{}",
    }),
  );
  assertEquals(refused.status, 401);
  await refused.body?.cancel();
});

Deno.test("a registry.bin the Worker cannot read answers every request 500 CONFIG_INVALID, saying why", async () => {
  const { data, modules } = await fixture();
  const { [data.restore]: _, ...withoutRestorer } = modules;
  const cases: [string, Uint8Array, Record<string, WebAssembly.Module>, string][] = [
    ["not deflated", new TextEncoder().encode(JSON.stringify(data)), modules, ""],
    ["cut short", deflated(data).subarray(0, 40), modules, ""],
    ["not JSON", deflateRawSync(new TextEncoder().encode("{tenants:")), modules, "JSON"],
    ["another format", deflated({ ...data, version: 3 }), modules, "bundle format 3"],
    ["not an object", deflated(null), modules, "bundle format undefined"],
    ["a helper missing", deflated(data), withoutRestorer, `module ${data.restore} is missing`],
  ];
  for (const [what, bytes, mods, says] of cases) {
    const worker = createEdgeWorker(bytes, mods);
    for (const request of [new Request("http://edge/healthz"), event()]) {
      const res = await worker.fetch(request);
      const body = await res.json();
      assertEquals([res.status, body.error?.code], [500, "CONFIG_INVALID"], what);
      ok(body.error.message.startsWith("the bundle cannot be served: "), what);
      ok(body.error.message.includes(says), `${what}: ${body.error.message}`);
    }
  }
});
