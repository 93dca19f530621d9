/**
 * Helpers of the HTTP suites: a service on a given store with the real
 * builder and runtimes, a small client, and hook folders to upload.
 */
import { encodeBase64 } from "../_base64.ts";
import { storeRuntimes } from "../../packages/deno/serve/serve.ts";
import { createDenoHookBuilder } from "../../packages/deno/serve/hook_builder.ts";
import {
  createService,
  type ServerDeps,
  type Service,
  type StorageLimits,
} from "../../packages/service/app.ts";
import { hashKey } from "../../packages/service/auth.ts";
import { createEngine, type Engine, type EngineOptions } from "../../packages/service/engine.ts";
import { Metrics } from "../../packages/service/metrics.ts";
import type { Store } from "../../packages/store/store.ts";
import { pluginBytes } from "../integration/_plugins.ts";

export const ADMIN = "test-admin-key-0123456789";

/** A service under test and a client for it. */
export interface Harness {
  service: Service;
  store: Store;
  /** The runtimes the service's hooks run on. */
  runtimes: ReturnType<typeof storeRuntimes>;
  /** The service's dispatcher. */
  engine: Engine;
  call(
    method: string,
    path: string,
    options?: {
      key?: string | null;
      body?: unknown;
      raw?: BodyInit;
      headers?: Record<string, string>;
    },
    // deno-lint-ignore no-explicit-any -- test answers are read field by field
  ): Promise<{ status: number; body: any; headers: Headers }>;
  /** Creates a tenant with a key; returns the key. */
  tenant(id: string, policy?: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

/** Builds a service on `store` (migrated here). */
export async function harness(
  store: Store,
  now?: () => number,
  workers = 0,
  storage?: Partial<StorageLimits>,
  more: Partial<ServerDeps> & Pick<EngineOptions, "matchApart"> = {},
): Promise<Harness> {
  await store.migrate();
  const runtimes = storeRuntimes(store, workers);
  const { matchApart, ...deps } = more;
  const engine = createEngine({ store, runtimes, ...(matchApart ? { matchApart } : {}) });
  const service = createService({
    store,
    engine,
    builder: createDenoHookBuilder(),
    adminKeyHash: await hashKey(ADMIN),
    metrics: new Metrics(),
    ...(now ? { now } : {}),
    ...(storage ? { storage } : {}),
    ...deps,
  });
  const call: Harness["call"] = async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    const key = options.key === undefined ? ADMIN : options.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    const body = options.raw ??
      (options.body === undefined ? undefined : JSON.stringify(options.body));
    const res = await service.app.request(path, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch { /* metrics and other text stay text */ }
    return { status: res.status, body: parsed, headers: res.headers };
  };
  return {
    service,
    store,
    runtimes,
    engine,
    call,
    async tenant(id, policy) {
      const made = await call("POST", "/v1/tenants", {
        body: { id, ...(policy ? { policy } : {}) },
      });
      if (made.status !== 201) throw new Error(`tenant ${id}: ${JSON.stringify(made.body)}`);
      const key = await call("POST", `/v1/tenants/${id}/keys`, { body: {} });
      return key.body.key as string;
    },
    async close() {
      await engine.close();
      await service.audit.flush();
      await runtimes.wasm.close?.();
      await store.close();
    },
  };
}

/** HOOK.md text for `name` on pre-tool-call. */
export function hookMd(name: string, extra = ""): string {
  return `---\nname: ${name}\ndescription: test hook\ntrigger: pre-tool-call\n${extra}---\n`;
}

/** A JSON upload of a corpus plugin as `plugin.wasm`. */
export async function wasmFolder(name: string, plugin: string, extra = ""): Promise<unknown> {
  return {
    files: {
      "HOOK.md": hookMd(name, extra),
      "plugin.wasm": { base64: encodeBase64(await pluginBytes(plugin)) },
    },
  };
}

/** A pre-tool-call event running `command`. */
export function toolEvent(command: string, extra: Record<string, unknown> = {}): unknown {
  return {
    event_type: "pre-tool-call",
    session_id: "sess-1",
    tool_name: "Bash",
    tool_input: { command },
    ...extra,
  };
}
