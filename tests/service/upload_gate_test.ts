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
import { UploadGate, type UploadLimits } from "../../packages/service/upload_gate.ts";
import { openSqliteStore } from "../../packages/store-sqlite/sqlite.ts";
import { ADMIN, hookMd } from "./_api.ts";
import { tempDir } from "../_helpers.ts";

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

/** Work that waits until the test lets it go, counting how much is under way. */
function heldWork() {
  const held = { running: 0, most: 0, waiting: [] as (() => void)[] };
  const hold = async () => {
    held.running++;
    held.most = Math.max(held.most, held.running);
    await new Promise<void>((resolve) => held.waiting.push(resolve));
    held.running--;
  };
  /** Lets the held work go, one at a time, until `done()`. */
  const letGo = async (done: () => boolean) => {
    for (let i = 0; i < 100_000 && !done(); i++) {
      held.waiting.shift()?.();
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  };
  return { held, hold, letGo };
}

/** Waits, a millisecond at a time (10 s at most), until `ready()`. */
async function until(ready: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000 && !ready(); i++) await new Promise((r) => setTimeout(r, 1));
}

/** What a builder returns for an uploaded prompt hook. */
const promptBuilt = (name: string) =>
  ({
    manifest: { name } as BuiltHook["manifest"],
    body: "",
    runtime: "prompt",
    plugin: null,
    builtFrom: "prompt",
  }) as BuiltHook;

/** A service on a store of its own with `builder` and upload bounds `uploads`. */
async function gatedService(builder: HookBuilder, uploads: Partial<UploadLimits>) {
  const store = openSqliteStore(
    `${await tempDir("hookbox-gate-")}/hookbox.db`,
  );
  await store.migrate();
  const engine = createEngine({ store, runtimes: {} });
  const service = createService({
    store,
    engine,
    builder,
    adminKeyHash: await hashKey(ADMIN),
    uploads,
  });
  /** One request with `key`; a JSON value as the body unless `type` names another. */
  const call = async (method: string, path: string, key: string, body?: unknown, type?: string) => {
    const res = await service.app.request(path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(type ? { "content-type": type } : {}) },
      ...(body === undefined ? {} : { body: type ? body as BodyInit : JSON.stringify(body) }),
    });
    return { status: res.status, body: await res.json() };
  };
  return {
    call,
    /** A new tenant's key. */
    async tenantKey(id: string): Promise<string> {
      await call("POST", "/v1/tenants", ADMIN, { id });
      return (await call("POST", `/v1/tenants/${id}/keys`, ADMIN, {})).body.key;
    },
    async close() {
      await engine.close();
      await service.audit.flush();
      await store.close();
    },
  };
}

Deno.test("PUT /v1/hooks: a tenant's parallel uploads never run more builds than the bounds", async () => {
  const { held, hold, letGo } = heldWork();
  // A builder that holds each build until the test lets it go.
  const builder: HookBuilder = {
    async build(name) {
      await hold();
      return promptBuilt(name);
    },
  };
  const service = await gatedService(builder, { waitingPerTenant: 8 });
  try {
    const key = await service.tenantKey("acme");
    const answers: { status: number; code?: string }[] = [];
    const uploads = Array.from(
      { length: 14 },
      (_, i) =>
        service.call("PUT", `/v1/hooks/h${i}`, key, { files: { "HOOK.md": hookMd(`h${i}`) } })
          .then((a) => answers.push({ status: a.status, code: a.body.error?.code })),
    );
    // Four are refused while the builds are held (2 uploads under way + 8 waiting); of the two
    // under way one builds: the server's other build slot is kept for other tenants.
    await until(() => answers.length >= 4 && held.waiting.length >= 1);
    assert.equal(held.running, 1, "one build under way, the rest held back");
    assert.deepEqual(answers, Array(4).fill({ status: 429, code: "QUOTA_EXCEEDED" }));
    await letGo(() => answers.length === 14);
    await Promise.all(uploads);
    assert.deepEqual(answers.slice(4).map((a) => a.status), Array(10).fill(201));
    assert.equal(held.most, 1, "one tenant's builds never take every build slot");
  } finally {
    await service.close();
  }
});

Deno.test("POST …/test: a tenant's parallel test runs never run more than the bounds either", async () => {
  const { held, hold, letGo } = heldWork();
  // A builder whose test runs (each a process, in the Deno builder) wait until the test lets them go.
  const builder: HookBuilder = {
    build: (name) => Promise.resolve(promptBuilt(name)),
    async test() {
      await hold();
      return { cases: [{ file: "tests/a.json", passed: true, failures: [] }] };
    },
  };
  const service = await gatedService(builder, { waitingPerTenant: 8 });
  try {
    const key = await service.tenantKey("acme");
    const files = { "HOOK.md": hookMd("h"), "tests/a.json": "{}" };
    assert.equal((await service.call("PUT", "/v1/hooks/h", key, { files })).status, 201);
    const answers: { status: number; code?: string }[] = [];
    const runs = Array.from(
      { length: 14 },
      () =>
        service.call("POST", "/v1/hooks/h/versions/1/test", key)
          .then((a) => answers.push({ status: a.status, code: a.body.error?.code })),
    );
    // Four are refused while the runs are held (2 under way + 8 waiting); one of them runs.
    await until(() => answers.length >= 4 && held.waiting.length >= 1);
    assert.equal(held.running, 1, "one test run under way, the rest held back");
    assert.deepEqual(answers, Array(4).fill({ status: 429, code: "QUOTA_EXCEEDED" }));
    await letGo(() => answers.length === 14);
    await Promise.all(runs);
    assert.deepEqual(answers.slice(4).map((a) => a.status), Array(10).fill(200));
    assert.equal(held.most, 1, "one tenant's test runs never take every build slot");
  } finally {
    await service.close();
  }
});

Deno.test("PUT /v1/hooks: many tenants' archives are unpacked a few at a time in the server", async () => {
  const { held, hold, letGo } = heldWork();
  // A builder whose unpacking (a worker thread each, in the Deno builder) waits for the test.
  const builder: HookBuilder = {
    async unpack() {
      await hold();
      return new Map([["HOOK.md", new TextEncoder().encode(hookMd("h"))]]);
    },
    build: (name) => Promise.resolve(promptBuilt(name)),
  };
  const service = await gatedService(builder, { unpacks: 3 });
  try {
    const keys = [];
    for (const id of ["a", "b", "c", "d"]) keys.push(await service.tenantKey(id));
    // Two uploads from each of four tenants: eight within every tenant's own bound.
    const uploads = keys.flatMap((key) =>
      [0, 1].map(() =>
        service.call("PUT", "/v1/hooks/h", key, new Uint8Array(8), "application/gzip")
      )
    );
    await until(() => held.waiting.length >= 3);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(held.running, 3, "three unpacking, the rest waiting for a slot");
    let answered = 0;
    for (const upload of uploads) upload.then(() => answered++);
    await letGo(() => answered === uploads.length);
    const answers = await Promise.all(uploads);
    assert.deepEqual(answers.map((a) => a.status), Array(8).fill(201));
    assert.equal(held.most, 3, "at most three at once");
  } finally {
    await service.close();
  }
});
