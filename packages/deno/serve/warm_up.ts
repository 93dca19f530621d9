/**
 * Warm-up before `hookbox serve` listens. V8 compiles the request path —
 * routing, validation, dispatch, the audit writer, the plugin workers'
 * runtime — while it runs, and a fresh process answers its first events
 * several times slower than a warm one: the first quarter second of a load
 * test had a p99 of 50–90 ms against 10–15 ms later on (docs/BENCHMARKS.md).
 * So the server first sends synthetic events through a throwaway copy of
 * itself: the same code and the same plugin workers, with its own in-memory
 * store, tenant, metrics and a small plugin of its own (`warm_up.wat`).
 * Nothing of it reaches the real store, metrics or log, and no tenant's
 * plugin runs: a tenant's first events still load its own hooks.
 *
 * @module
 */
import { base64Bytes } from "../../core/bytes.ts";
import { sha256Hex } from "../../core/bytes.ts";
import { createService } from "../../service/app.ts";
import { hashKey, newKey } from "../../service/auth.ts";
import type { HookBuilder } from "../../service/builder.ts";
import { createEngine, type EngineOptions } from "../../service/engine.ts";
import { Metrics } from "../../service/metrics.ts";
import { openSqliteStore } from "../../store-sqlite/sqlite.ts";
import { WARM_UP_PLUGIN_BASE64 } from "./_warm_up_plugin.ts";

/** Synthetic events `hookbox serve` sends itself before it listens, by default. */
export const WARM_UP_EVENTS = 2000;
/** Most warm-up events `--warm-up` accepts. */
export const MAX_WARM_UP_EVENTS = 100_000;
/** Warm-up events in flight at once: enough for the workers to take batches, as under load. */
const CONCURRENCY = 64;
const TENANT = "hookbox-warm-up";
/** Two warm hooks and a fresh one: both ways a plugin is run. */
const HOOKS = [["warm-a", "warm"], ["warm-b", "warm"], ["warm-c", "fresh"]] as const;
const TOOLS = ["Bash", "Read", "Write", "Edit"] as const;
const FAILED = new Set(["error", "timeout", "limit"]);

/** The runtimes the server runs, able to lend a plugin the real store does not hold. */
export type WarmUpRuntimes = EngineOptions["runtimes"] & {
  lend(sha256: string, bytes: Uint8Array): () => void;
};

/** What a warm-up did. */
export interface WarmUpReport {
  /** Events sent. */
  events: number;
  /**
   * Of those, answered with another status than 200 or with a hook that
   * failed (an error, timeout or limit): a bug, not the caller's doing.
   */
  failed: number;
  /** Of those, blocked (the plugin's deny path ran). */
  blocked: number;
  /** Time it took, setting up included. */
  ms: number;
}

/**
 * Sends `events` synthetic events through a throwaway service on `runtimes`
 * (its own in-memory store), then closes what it opened. Throws when the
 * throwaway service cannot be set up; the caller starts cold then.
 */
export async function warmUp(
  runtimes: WarmUpRuntimes,
  builder: HookBuilder,
  events = WARM_UP_EVENTS,
): Promise<WarmUpReport> {
  const started = performance.now();
  const bytes = warmUpPlugin();
  const admin = newKey();
  const adminKeyHash = await hashKey(admin);
  const giveBack = runtimes.lend(await sha256Hex(bytes), bytes);
  const store = openSqliteStore(":memory:");
  const engine = createEngine({ store, runtimes });
  const service = createService({ store, engine, builder, adminKeyHash, metrics: new Metrics() });
  const ask = async (method: string, path: string, key: string, body: unknown) => {
    const res = await service.app.fetch(
      new Request(`http://warm-up${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      }),
    );
    return { status: res.status, body: await res.json() as Record<string, unknown> };
  };
  const expect = (what: string, got: { status: number; body: unknown }, status: number) => {
    if (got.status !== status) {
      throw new Error(`warm-up: ${what} answered ${got.status} ${JSON.stringify(got.body)}`);
    }
  };
  let failed = 0;
  let blocked = 0;
  try {
    await store.migrate();
    expect("tenant", await ask("POST", "/v1/tenants", admin, { id: TENANT }), 201);
    const made = await ask("POST", `/v1/tenants/${TENANT}/keys`, admin, {});
    expect("key", made, 201);
    const key = String(made.body.key);
    const plugin = { base64: WARM_UP_PLUGIN_BASE64 };
    for (const [name, isolation] of HOOKS) {
      const manifest =
        `---\nname: ${name}\ndescription: warm-up\ntrigger: pre-tool-call\nisolation: ${isolation}\n---\n`;
      const files = { "HOOK.md": manifest, "plugin.wasm": plugin };
      expect(name, await ask("PUT", `/v1/hooks/${name}`, key, { files }), 201);
    }
    let next = 0;
    const client = async () => {
      while (next < events) {
        const got = await ask("POST", "/v1/events", key, syntheticEvent(next++));
        const hooks = (got.body.hooks ?? []) as { outcome?: string }[];
        if (got.status !== 200 || hooks.some((h) => FAILED.has(h.outcome ?? "error"))) failed++;
        else if (got.body.decision === "block") blocked++;
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, events) }, client));
  } finally {
    await engine.close();
    await service.audit.flush();
    await store.close();
    giveBack();
  }
  return { events, failed, blocked, ms: Math.round(performance.now() - started) };
}

/** Event `i`: tools and inputs vary; one Bash command in ten holds a "!" (the plugin denies it). */
function syntheticEvent(i: number): Record<string, unknown> {
  const tool = TOOLS[i % TOOLS.length]!;
  return {
    event_type: "pre-tool-call",
    session_id: `warm-up-${i % 16}`,
    tool_name: tool,
    tool_input: tool === "Bash"
      ? { command: i % 10 === 0 ? `echo warm-up ${i}!` : `ls -la /tmp/warm-up/${i}` }
      : { file_path: `/tmp/warm-up/${i}.txt`, content: "x".repeat(i % 64) },
  };
}

/** The warm-up plugin's bytes. */
export function warmUpPlugin(): Uint8Array {
  return base64Bytes(WARM_UP_PLUGIN_BASE64);
}
