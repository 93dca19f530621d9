/**
 * The bounds on uploads (packages/service/upload_gate.ts): a tenant's uploads run a
 * few at a time and queue in order, past the queue they are refused, and
 * builds are bounded server-wide, so one tenant sending uploads in parallel
 * cannot start a compiler per connection.
 */
import assert from "node:assert/strict";
import { ApiError } from "../../packages/service/errors.ts";
import { createEngine } from "../../packages/service/engine.ts";
import { createService } from "../../packages/service/app.ts";
import { hashKey } from "../../packages/service/auth.ts";
import type { BuiltHook, HookBuilder } from "../../packages/service/builder.ts";
import { UploadGate } from "../../packages/service/upload_gate.ts";
import { openSqliteStore } from "../../packages/store-sqlite/sqlite.ts";
import { ADMIN, hookMd } from "./_api.ts";

/** Lets microtasks and pending promise reactions run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

Deno.test("a tenant's uploads run two at a time, the next wait in order, and past the queue get 429", async () => {
  const gate = new UploadGate({ perTenant: 2, waitingPerTenant: 3, builds: 8 });
  const order: number[] = [];
  const releases: (() => void)[] = [];
  const admitted = [0, 1, 2, 3, 4].map((i) =>
    gate.admit("acme").then((release) => {
      order.push(i);
      releases.push(release);
    })
  );
  await settle();
  assert.deepEqual(order, [0, 1], "two at once");
  const refused = await gate.admit("acme").then(() => null, (err) => err);
  assert.ok(refused instanceof ApiError);
  assert.deepEqual([refused.status, refused.code, refused.extra.retryAfter], [
    429,
    "QUOTA_EXCEEDED",
    1,
  ]);
  // Another tenant is not held up by acme's queue.
  const other = await gate.admit("globex");
  releases.shift()!();
  releases[0]!(); // a release called twice frees one slot only
  releases.shift()!();
  await settle();
  assert.deepEqual(order, [0, 1, 2, 3], "the waiting ones go in the order they came");
  while (releases.length > 0) {
    releases.shift()!();
    await settle();
  }
  await Promise.all(admitted);
  assert.deepEqual(order, [0, 1, 2, 3, 4]);
  other();
  // Everything released: a fresh burst gets the same two slots again.
  const again = await Promise.all([gate.admit("acme"), gate.admit("acme")]);
  again.forEach((release) => release());
});

Deno.test("builds are bounded server-wide, whoever asks", async () => {
  const gate = new UploadGate({ builds: 2 });
  let running = 0;
  let most = 0;
  const gates: (() => void)[] = [];
  const builds = Array.from({ length: 6 }, (_, i) =>
    gate.build(`t${i}`, async () => {
      running++;
      most = Math.max(most, running);
      await new Promise<void>((resolve) => gates.push(resolve));
      running--;
    }));
  for (let done = 0; done < 6; done++) {
    await settle();
    assert.equal(running, Math.min(2, 6 - done));
    gates.shift()!();
  }
  await Promise.all(builds);
  assert.equal(most, 2);
  // A build that throws frees its slot.
  await assert.rejects(gate.build("t0", () => Promise.reject(new Error("broken"))), /broken/);
  await gate.build("t0", () => Promise.resolve());
  assert.throws(() => new UploadGate({ builds: 0 }), RangeError);
});

Deno.test("one tenant never holds every build slot: the last is kept for another tenant", async () => {
  const gate = new UploadGate({ builds: 2 });
  const running: string[] = [];
  const gates: (() => void)[] = [];
  const build = (tenant: string) =>
    gate.build(tenant, async () => {
      running.push(tenant);
      await new Promise<void>((resolve) => gates.push(resolve));
      running.splice(running.indexOf(tenant), 1);
    });
  const a = [build("a"), build("a"), build("a")];
  await settle();
  assert.deepEqual(running, ["a"], "a's builds go one at a time");
  const b = build("b");
  await settle();
  assert.deepEqual(running, ["a", "b"], "b starts at once, in the slot a could not take");
  while (gates.length > 0) {
    gates.shift()!();
    await settle();
  }
  await Promise.all([...a, b]);
  // A gate of one build lets a lone tenant use it.
  const one = new UploadGate({ builds: 1 });
  await one.build("a", () => Promise.resolve());
});

Deno.test("PUT /v1/hooks: a tenant's parallel uploads never run more builds than the bounds", async () => {
  const store = openSqliteStore(
    `${await Deno.makeTempDir({ prefix: "hookbox-gate-" })}/hookbox.db`,
  );
  await store.migrate();
  let running = 0;
  let most = 0;
  const waiting: (() => void)[] = [];
  // A builder that holds each build until the test lets it go.
  const builder: HookBuilder = {
    async build(name) {
      running++;
      most = Math.max(most, running);
      await new Promise<void>((resolve) => waiting.push(resolve));
      running--;
      return {
        manifest: { name } as BuiltHook["manifest"],
        body: "",
        runtime: "prompt",
        plugin: null,
        builtFrom: "prompt",
      } as BuiltHook;
    },
  };
  const engine = createEngine({ store, runtimes: {} });
  const service = createService({
    store,
    engine,
    builder,
    adminKeyHash: await hashKey(ADMIN),
    uploads: { waitingPerTenant: 8 },
  });
  const call = async (method: string, path: string, key: string, body: unknown) => {
    const res = await service.app.request(path, {
      method,
      headers: { authorization: `Bearer ${key}` },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };
  try {
    await call("POST", "/v1/tenants", ADMIN, { id: "acme" });
    const key = (await call("POST", "/v1/tenants/acme/keys", ADMIN, {})).body.key;
    const answers: { status: number; code?: string }[] = [];
    const uploads = Array.from(
      { length: 14 },
      (_, i) =>
        call("PUT", `/v1/hooks/h${i}`, key, { files: { "HOOK.md": hookMd(`h${i}`) } })
          .then((a) => answers.push({ status: a.status, code: a.body.error?.code })),
    );
    // Four are refused while the builds are held (2 uploads under way + 8 waiting); of the two
    // under way one builds: the server's other build slot is kept for other tenants.
    for (let i = 0; i < 10_000 && (answers.length < 4 || waiting.length < 1); i++) {
      await new Promise((r) => setTimeout(r, 1));
    }
    assert.equal(running, 1, "one build under way, the rest held back");
    assert.deepEqual(answers, Array(4).fill({ status: 429, code: "QUOTA_EXCEEDED" }));
    for (let i = 0; i < 100_000 && answers.length < 14; i++) {
      waiting.shift()?.();
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    await Promise.all(uploads);
    assert.deepEqual(answers.slice(4).map((a) => a.status), Array(10).fill(201));
    assert.equal(most, 1, "one tenant's builds never take every build slot");
  } finally {
    await engine.close();
    await service.audit.flush();
    await store.close();
  }
});

Deno.test("POST …/test: a tenant's parallel test runs never run more than the bounds either", async () => {
  const store = openSqliteStore(
    `${await Deno.makeTempDir({ prefix: "hookbox-gate-" })}/hookbox.db`,
  );
  await store.migrate();
  let running = 0;
  let most = 0;
  const waiting: (() => void)[] = [];
  // A builder whose test runs (each a process, in the Deno builder) wait until the test lets them go.
  const builder: HookBuilder = {
    build: (name) =>
      Promise.resolve({
        manifest: { name } as BuiltHook["manifest"],
        body: "",
        runtime: "prompt",
        plugin: null,
        builtFrom: "prompt",
      } as BuiltHook),
    async test() {
      running++;
      most = Math.max(most, running);
      await new Promise<void>((resolve) => waiting.push(resolve));
      running--;
      return { cases: [{ file: "tests/a.json", passed: true, failures: [] }] };
    },
  };
  const engine = createEngine({ store, runtimes: {} });
  const service = createService({
    store,
    engine,
    builder,
    adminKeyHash: await hashKey(ADMIN),
    uploads: { waitingPerTenant: 8 },
  });
  const call = async (method: string, path: string, key: string, body?: unknown) => {
    const res = await service.app.request(path, {
      method,
      headers: { authorization: `Bearer ${key}` },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: await res.json() };
  };
  try {
    await call("POST", "/v1/tenants", ADMIN, { id: "acme" });
    const key = (await call("POST", "/v1/tenants/acme/keys", ADMIN, {})).body.key;
    const files = { "HOOK.md": hookMd("h"), "tests/a.json": "{}" };
    assert.equal((await call("PUT", "/v1/hooks/h", key, { files })).status, 201);
    const answers: { status: number; code?: string }[] = [];
    const runs = Array.from(
      { length: 14 },
      () =>
        call("POST", "/v1/hooks/h/versions/1/test", key)
          .then((a) => answers.push({ status: a.status, code: a.body.error?.code })),
    );
    // Four are refused while the runs are held (2 under way + 8 waiting); one of them runs.
    for (let i = 0; i < 10_000 && (answers.length < 4 || waiting.length < 1); i++) {
      await new Promise((r) => setTimeout(r, 1));
    }
    assert.equal(running, 1, "one test run under way, the rest held back");
    assert.deepEqual(answers, Array(4).fill({ status: 429, code: "QUOTA_EXCEEDED" }));
    for (let i = 0; i < 100_000 && answers.length < 14; i++) {
      waiting.shift()?.();
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    await Promise.all(runs);
    assert.deepEqual(answers.slice(4).map((a) => a.status), Array(10).fill(200));
    assert.equal(most, 1, "one tenant's test runs never take every build slot");
  } finally {
    await engine.close();
    await service.audit.flush();
    await store.close();
  }
});

Deno.test("PUT /v1/hooks: many tenants' archives are unpacked a few at a time in the server", async () => {
  const store = openSqliteStore(
    `${await Deno.makeTempDir({ prefix: "hookbox-gate-" })}/hookbox.db`,
  );
  await store.migrate();
  let running = 0;
  let most = 0;
  const waiting: (() => void)[] = [];
  // A builder whose unpacking (a worker thread each, in the Deno builder) waits for the test.
  const builder: HookBuilder = {
    async unpack() {
      running++;
      most = Math.max(most, running);
      await new Promise<void>((resolve) => waiting.push(resolve));
      running--;
      return new Map([["HOOK.md", new TextEncoder().encode(hookMd("h"))]]);
    },
    build: (name) =>
      Promise.resolve({
        manifest: { name } as BuiltHook["manifest"],
        body: "",
        runtime: "prompt",
        plugin: null,
        builtFrom: "prompt",
      } as BuiltHook),
  };
  const engine = createEngine({ store, runtimes: {} });
  const service = createService({
    store,
    engine,
    builder,
    adminKeyHash: await hashKey(ADMIN),
    uploads: { unpacks: 3 },
  });
  const call = async (
    method: string,
    path: string,
    key: string,
    body?: BodyInit,
    type?: string,
  ) => {
    const res = await service.app.request(path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(type ? { "content-type": type } : {}) },
      ...(body === undefined ? {} : { body }),
    });
    return { status: res.status, body: await res.json() };
  };
  try {
    const keys: string[] = [];
    for (const id of ["a", "b", "c", "d"]) {
      await call("POST", "/v1/tenants", ADMIN, JSON.stringify({ id }));
      keys.push((await call("POST", `/v1/tenants/${id}/keys`, ADMIN, "{}")).body.key);
    }
    // Two uploads from each of four tenants: eight within every tenant's own bound.
    const uploads = keys.flatMap((key) =>
      [0, 1].map(() => call("PUT", "/v1/hooks/h", key, new Uint8Array(8), "application/gzip"))
    );
    for (let i = 0; i < 10_000 && waiting.length < 3; i++) {
      await new Promise((r) => setTimeout(r, 1));
    }
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(running, 3, "three unpacking, the rest waiting for a slot");
    for (let i = 0; i < 100_000 && (waiting.length > 0 || running > 0); i++) {
      waiting.shift()?.();
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    const answers = await Promise.all(uploads);
    assert.deepEqual(answers.map((a) => a.status), Array(8).fill(201));
    assert.equal(most, 3, "at most three at once");
  } finally {
    await engine.close();
    await service.audit.flush();
    await store.close();
  }
});
