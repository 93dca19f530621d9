/**
 * Extism HTTP: granted per hook by HOOK.md `allowed_hosts` (default none),
 * served only in worker mode. A loopback server stands in for the network.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import type { RunRequest, Runtime } from "../../packages/core/runtime/types.ts";
import { hostAllowed } from "../../packages/runtime-wasm/http/_http_wire.ts";
import { corpusRuntime, request, wasmHook, withoutFuel } from "./_corpus.ts";
import { runFailure } from "../../packages/core/runtime/failure.ts";

const BIG = "x".repeat(4096);

/** Serves `/hello` and `/big` on 127.0.0.1 for the duration of `fn`; counts requests. */
async function withServer(fn: (base: string, hits: () => number) => Promise<void>): Promise<void> {
  let hits = 0;
  const release = Promise.withResolvers<void>();
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    hits++;
    const path = new URL(req.url).pathname;
    if (path === "/never") await release.promise;
    if (path === "/hello") return new Response("hello from loopback");
    if (path === "/big") return new Response(BIG);
    return new Response("no such page", { status: 404 });
  });
  try {
    await fn(`http://127.0.0.1:${server.addr.port}`, () => hits);
  } finally {
    release.resolve();
    await server.shutdown();
  }
}

/** A call of the `http_get_extism` plugin asking for `url`, granted the hook's hosts (as for a platform hook). */
function get(url: string, frontmatter: Record<string, unknown>, outputKb = 64): RunRequest {
  const hook = wasmHook("http_get_extism", frontmatter);
  const body = JSON.stringify({ url, method: "GET", headers: {} });
  return request(hook, body, { outputKb }, { allowedHosts: hook.manifest.allowed_hosts });
}

async function withWorker(fn: (runtime: Runtime) => Promise<void>): Promise<void> {
  const runtime = corpusRuntime({}, { worker: true });
  try {
    await fn(runtime);
  } finally {
    await runtime.close?.();
  }
}

Deno.test("http_request in worker mode returns the body from an allowed host", async () => {
  await withServer((base) =>
    withWorker(async (runtime) => {
      for (const isolation of ["fresh", "warm"]) {
        const call = get(`${base}/hello`, { allowed_hosts: ["127.0.0.1"], isolation });
        const result = await runtime.run(call);
        assertEquals(withoutFuel(result), {
          exitCode: 0,
          stdout: "hello from loopback",
          stderr: "",
        });
      }
      const missing = await runtime.run(get(`${base}/nope`, { allowed_hosts: ["127.0.0.1"] }));
      assertEquals(withoutFuel(missing), { exitCode: 1, stdout: "no such page", stderr: "" });
    })
  );
});

Deno.test("http_request to a host outside allowed_hosts is denied before any request", async () => {
  await withServer((base, hits) =>
    withWorker(async (runtime) => {
      const result = await runtime.run(get(`${base}/hello`, { allowed_hosts: ["example.com"] }));
      assertEquals(result.failure, runFailure("HTTP_DENIED", "127.0.0.1"));
      assertEquals(hits(), 0);
    })
  );
});

Deno.test("http_request is denied by default (no allowed_hosts)", async () => {
  await withServer((base, hits) =>
    withWorker(async (runtime) => {
      const result = await runtime.run(get(`${base}/hello`, {}));
      assertEquals(result.failure, runFailure("HTTP_DENIED", "127.0.0.1"));
      const next = await runtime.run(get(`${base}/hello`, { allowed_hosts: ["127.0.0.1"] }));
      assertEquals(next.stdout, "hello from loopback");
      assertEquals(hits(), 1);
    })
  );
});

Deno.test("http_request refuses a response body over the output cap", async () => {
  await withServer((base) =>
    withWorker(async (runtime) => {
      const result = await runtime.run(get(`${base}/big`, { allowed_hosts: ["127.0.0.1"] }, 1));
      assertEquals(result.failure, runFailure("HTTP_FAILED", "response body over 1024 bytes"));
    })
  );
});

Deno.test("http_request that outlasts the call's deadline reports timeout", async () => {
  await withServer((base) =>
    withWorker(async (runtime) => {
      const call = get(`${base}/never`, { allowed_hosts: ["127.0.0.1"] });
      const result = await runtime.run({ ...call, limits: { ...call.limits, timeoutMs: 300 } });
      assertEquals(result.failure, runFailure("TIMEOUT"));
      const next = await runtime.run(get(`${base}/hello`, { allowed_hosts: ["127.0.0.1"] }));
      assertEquals(next.stdout, "hello from loopback");
    })
  );
});

Deno.test("http_request outside worker mode fails, saying HTTP needs worker mode", async () => {
  await withServer(async (base, hits) => {
    const runtime = corpusRuntime();
    const result = await runtime.run(get(`${base}/hello`, { allowed_hosts: ["127.0.0.1"] }));
    assertEquals(result.failure, runFailure("HTTP_FAILED", "HTTP needs worker mode"));
    assertEquals(hits(), 0);
    await runtime.close?.();
  });
});

Deno.test("hostAllowed() matches exact hosts and *.suffix wildcards only", () => {
  const patterns = ["api.example.com", "*.trusted.dev"];
  assertEquals(hostAllowed("api.example.com", patterns), true);
  assertEquals(hostAllowed("API.Example.com", patterns), true);
  assertEquals(hostAllowed("example.com", patterns), false);
  assertEquals(hostAllowed("a.trusted.dev", patterns), true);
  assertEquals(hostAllowed("a.b.trusted.dev", patterns), true);
  assertEquals(hostAllowed("trusted.dev", patterns), false);
  assertEquals(hostAllowed("eviltrusted.dev", patterns), false);
  assertEquals(hostAllowed("anything", []), false);
});
