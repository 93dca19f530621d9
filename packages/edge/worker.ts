/**
 * The Worker of an edge bundle (SPEC §7): the §6 Hono app over a read-only
 * bundle store, with plugins prepared by `hookbox bundle` — no rewriter and
 * no WebAssembly compilation at run time (edge runtimes refuse both). It
 * serves `POST /v1/events` and `GET /healthz` exactly as the service does;
 * the registry and admin routes answer 404 here (manage hooks on the
 * service, then bundle again). Each decision's audit item is printed as one
 * JSON line, or posted in batches to the service when the Worker has
 * `HOOKBOX_AUDIT_URL` (see `audit_post.ts`); async hooks finish after the answer through `ctx.waitUntil`, and
 * their records are printed as JSON lines too.
 *
 * @module
 */
import { type ErrorCode, HookboxError } from "../core/errors.ts";
import { createPromptRuntime } from "../core/runtime/prompt.ts";
import {
  createWasmRuntime,
  type LoadedPlugin,
  type MemoryImage,
  type RunsImage,
  runsImage,
} from "../runtime-wasm/mod.ts";
import { createService } from "../service/app.ts";
import { createEngine } from "../service/engine.ts";
import { ApiError } from "../service/errors.ts";
import type { AuditRow } from "../store/store.ts";
import {
  BUNDLE_VERSION,
  type BundleData,
  decodeRuns,
  type ImagePlace,
  preparedKey,
} from "./bundle_data.ts";
import { type AuditPoster, createAuditPoster } from "./audit_post.ts";
import { bundleStore } from "./store.ts";

/** What the Worker module exports: the `fetch` handler. */
export interface EdgeWorker {
  /** The Workers `fetch` handler. */
  fetch(request: Request, env?: unknown, ctx?: unknown): Promise<Response>;
}

/** Options of {@linkcode createEdgeWorker}. */
export interface EdgeWorkerOptions {
  /** Receives each group of audit rows. @default one JSON line per row on the console */
  audit?: (rows: AuditRow[]) => Promise<void>;
  /** Fuel one event's synchronous hooks may burn together. @default EDGE_EVENT_FUEL */
  eventFuel?: number;
  /** The bundle's `images.bin` (memory images of plugins that share a module). */
  images?: ArrayBuffer;
}

/** What one tenant's requests may hold in a Worker's isolate, bytes (`held_bytes.ts`). */
export const EDGE_TENANT_HELD_BYTES = 16 * 1024 * 1024;
/** What all tenants' requests may hold in a Worker's isolate, bytes. */
export const EDGE_SERVER_HELD_BYTES = 48 * 1024 * 1024;

/**
 * Fuel per millisecond of a hook's timeout in a Worker, whose clock stands
 * still during CPU work: a hook's fuel is capped at timeout × this, so its
 * timeout becomes a fuel budget. Conservative: a tight loop runs 1.2–3.3
 * million units per ms on the hardware measured, host calls cost more.
 */
export const EDGE_FUEL_PER_MS = 1_000_000;

/**
 * Fuel one event's synchronous hooks may burn together in a Worker: 10 s of
 * hook timeouts at {@linkcode EDGE_FUEL_PER_MS}, about 3–9 s of CPU at the
 * measured 0.3–0.85 ns per unit — under Workers' default 30 s CPU limit, whose
 * error would kill the whole request (and so ignore `on_error`) instead of
 * ending one hook as `limit`.
 */
export const EDGE_EVENT_FUEL = 10_000_000_000;

/** Bytes idle warm instances may hold in a Worker isolate. */
export const EDGE_WARM_BYTES = 32 * 1024 * 1024;

const SERVED = new Set(["POST /v1/events", "GET /healthz"]);

/**
 * The memory image of each plugin that shares its module, by the plugin's
 * SHA-256: its module's base runs, then its own (`bundle_data.ts`), read
 * as views into their chunk of `images.bin`, which is inflated the first
 * time one of its plugins loads. A base is read once for all the plugins on
 * it: a thousand hooks must not hold a thousand lists of the same runs.
 */
function imagesOf(
  data: BundleData,
  buffer: ArrayBuffer | undefined,
): (sha: string) => Promise<MemoryImage | null> {
  const chunks = new Map<number, Promise<ArrayBuffer>>();
  const inflated = (chunk: number) => {
    let made = chunks.get(chunk);
    if (made === undefined) {
      const [offset, length] = data.chunks[chunk]!;
      const stream = new Blob([new Uint8Array(buffer!, offset, length)]).stream()
        .pipeThrough(new DecompressionStream("deflate-raw"));
      chunks.set(chunk, made = new Response(stream).arrayBuffer());
    }
    return made;
  };
  const runsAt = ({ chunk, at }: ImagePlace) =>
    inflated(chunk).then((bytes) => runsImage(decodeRuns(bytes, at)));
  const bases = new Map<string, Promise<RunsImage>>();
  const baseMemories = new Map<RunsImage, { memory: WebAssembly.Memory; length: number }>();
  /** A base's runs written into a memory of their own, once, for warm instances to restore from. */
  const baseMemory = (base: RunsImage) => {
    let made = baseMemories.get(base);
    if (made === undefined) {
      const length = base.runs.reduce((end, [at, bytes]) => Math.max(end, at + bytes.length), 0);
      const pages = Math.ceil(length / 65536);
      const memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
      base.write(new Uint8Array(memory.buffer));
      baseMemories.set(base, made = { memory, length });
    }
    return made;
  };
  const images = new Map<string, Promise<MemoryImage>>();
  return (sha) => {
    const where = data.images[sha];
    if (where === undefined) return Promise.resolve(null);
    if (buffer === undefined) throw new Error("images.bin is missing from the bundle");
    let image = images.get(sha);
    if (image === undefined) {
      const key = `${where.base.chunk}:${where.base.at}`;
      let base = bases.get(key);
      if (base === undefined) bases.set(key, base = runsAt(where.base));
      image = Promise.all([base, runsAt(where.own)]).then(([b, own]) => ({
        // The base copied whole from its memory (one copy, not a write per run), zeros past it,
        // then the plugin's runs: every byte, whatever the memory held.
        write: (memory: Uint8Array) => {
          const { memory: from, length } = baseMemory(b);
          const end = Math.min(length, memory.length);
          memory.set(new Uint8Array(from.buffer, 0, end));
          memory.fill(0, end);
          own.write(memory);
        },
        overwrites: true,
        layers: () => {
          const { memory, length } = baseMemory(b);
          return { base: memory, baseLength: length, runs: own.runs };
        },
      }));
      images.set(sha, image);
    }
    return image;
  };
}

/**
 * The registry of `registry.bin` (`hookbox bundle`): {@linkcode BundleData}
 * as JSON, deflate-raw compressed. A Worker starts without reading it (a
 * thousand tenants' registry is over a megabyte of JSON: as text in
 * `worker.js`, workerd would scan it as JavaScript at every start) and
 * inflates it on its first request.
 */
export async function readRegistry(bytes: ArrayBuffer | Uint8Array): Promise<BundleData> {
  const stream = new Blob([bytes as BlobPart]).stream()
    .pipeThrough(new DecompressionStream("deflate-raw"));
  const data = JSON.parse(await new Response(stream).text()) as BundleData;
  checkBundle(data);
  return data;
}

function checkBundle(data: BundleData): void {
  if (data?.version !== BUNDLE_VERSION) {
    throw new Error(`bundle format ${data?.version} is not ${BUNDLE_VERSION}: bundle again`);
  }
}

/**
 * Builds the Worker from bundle data, or the bytes of the bundle's
 * `registry.bin` (read on the first request), and its modules (instrumented
 * SHA-256 → module).
 */
export function createEdgeWorker(
  registry: BundleData | ArrayBuffer | Uint8Array,
  modules: Record<string, WebAssembly.Module>,
  options: EdgeWorkerOptions = {},
): EdgeWorker {
  const moduleOf = (sha: string): WebAssembly.Module => {
    const module = modules[sha];
    if (module === undefined) throw new Error(`module ${sha} is missing from the bundle`);
    return module;
  };
  const checked = (data: BundleData) => {
    moduleOf(data.trap);
    moduleOf(data.restore);
    return data;
  };
  let data: BundleData | null = null;
  let reading: Promise<BundleData> | null = null;
  if (!(registry instanceof ArrayBuffer || registry instanceof Uint8Array)) {
    checkBundle(registry);
    data = checked(registry);
  }
  // Workers forbid timers and randomness at global scope: build on the first request.
  let app: ((request: Request, env: unknown, ctx: unknown) => Promise<Response>) | null = null;
  let poster: AuditPoster | null = null;
  const build = (data: BundleData, env: WorkerEnv) => {
    const imageOf = imagesOf(data, options.images);
    poster = auditPosterFor(env);
    const audit = options.audit ?? (poster
      ? ((rows: AuditRow[]) => {
        poster!.push(rows);
        return Promise.resolve();
      })
      : ((rows: AuditRow[]) => {
        for (const row of rows) console.log(JSON.stringify({ audit: row }));
        return Promise.resolve();
      }));
    const store = bundleStore(data, audit);
    const wasm = createWasmRuntime({
      // An isolate has 128 MB for everything: warm instances get a quarter.
      warmBytes: EDGE_WARM_BYTES,
      // One thread runs every call anyway: a call's instance is made when the one before is over,
      // so concurrent requests never hold more than one running hook's memory between them.
      oneCallAtATime: true,
      loadBytes: () => Promise.reject(new Error("an edge bundle loads prepared plugins only")),
      compile: (_bytes, sha) => Promise.resolve(moduleOf(sha)),
      loadPrepared: (hook, limits) => {
        const key = hook.entry.runtime === "wasm"
          ? preparedKey(hook.entry.path, limits, hook.manifest.isolation)
          : "";
        const failure = data.failures[key];
        if (failure !== undefined) {
          return Promise.reject(new HookboxError(failure.code as ErrorCode, failure.message));
        }
        const plugin = data.plugins[key];
        if (plugin === undefined) {
          return Promise.reject(
            new HookboxError(
              "PLUGIN_INVALID",
              `hook "${hook.name}" was not prepared for these limits (memory ${limits.memoryMb} MiB, module ${limits.moduleKb} KiB): bundle again`,
            ),
          );
        }
        return imageOf(plugin.sha256).then((image): LoadedPlugin => ({
          ...plugin,
          module: moduleOf(plugin.instrumentedSha256),
          ...(image === null ? {} : { image }),
        }));
      },
    });
    const engine = createEngine({
      store,
      fuelPerMs: EDGE_FUEL_PER_MS,
      eventFuel: options.eventFuel ?? EDGE_EVENT_FUEL,
      runtimes: { wasm, prompt: createPromptRuntime() },
      onAsyncResult: (tenant_id, record) =>
        console.log(JSON.stringify({ async: { tenant_id, record } })),
    });
    const service = createService({
      store,
      engine,
      builder: { build: () => Promise.reject(new Error("uploads go to the hookbox service")) },
      // No key hashes to this: the admin routes are not served here anyway.
      adminKeyHash: "-",
      // An isolate has 128 MB: what requests hold (bodies, unread answers) stays well under it.
      tenantHeldBytes: EDGE_TENANT_HELD_BYTES,
      serverHeldBytes: EDGE_SERVER_HELD_BYTES,
      served: SERVED,
    });
    return (request: Request, env: unknown, ctx: unknown) =>
      Promise.resolve(service.app.fetch(request, env, ctx as never));
  };
  const worker: EdgeWorker = {
    fetch(request, env, ctx) {
      const path = pathOf(request.url);
      if (!SERVED.has(`${request.method} ${path}`)) {
        const error = new ApiError(
          404,
          "NOT_FOUND",
          "this Worker serves POST /v1/events and GET /healthz; manage hooks on the hookbox service and bundle again",
        );
        return Promise.resolve(Response.json(error.body(), { status: 404 }));
      }
      if (data === null) {
        // Read on the first request (Workers refuse streams at global scope); one that cannot be
        // read fails every request the same way, with the reason.
        reading ??= readRegistry(registry as ArrayBuffer | Uint8Array).then(checked);
        return reading.then(
          (read) => (data = read, worker.fetch(request, env, ctx)),
          (err) => configInvalid(`the bundle cannot be served: ${err.message}`),
        );
      }
      try {
        app ??= build(data, (env ?? {}) as WorkerEnv);
      } catch (err) {
        return Promise.resolve(configInvalid((err as Error).message));
      }
      const answer = app(request, env, ctx);
      if (poster === null) return answer;
      const context = ctx as { waitUntil?: (p: Promise<unknown>) => void } | undefined;
      const drain = poster;
      return answer.finally(() => context?.waitUntil?.(drain.drain()));
    },
  };
  return worker;
}

function configInvalid(message: string): Response {
  return Response.json(new ApiError(500, "CONFIG_INVALID", message).body(), { status: 500 });
}

/**
 * The path of a request's URL, which the runtime has already parsed and
 * normalised (`http://host/v1/events?x` → `/v1/events`) — without building a
 * `URL`, which costs more than the rest of the routing.
 */
export function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return "/";
  let end = url.length;
  const query = url.indexOf("?", start);
  if (query >= 0) end = query;
  const hash = url.indexOf("#", start);
  if (hash >= 0 && hash < end) end = hash;
  return url.slice(start, end);
}

/** The Worker's bindings hookbox reads (set by `hookbox bundle --audit-url`). */
interface WorkerEnv {
  /** The §6 service's `POST /v1/audit/ingest` URL. */
  HOOKBOX_AUDIT_URL?: string;
  /** Its admin key (a secret: `wrangler secret put`, or workerd's environment). */
  HOOKBOX_AUDIT_KEY?: string;
  /** A service binding to post through (workerd: an external service), else global fetch. */
  HOOKBOX_AUDIT?: { fetch(request: Request): Promise<Response> };
}

function auditPosterFor(env: WorkerEnv): AuditPoster | null {
  const url = env.HOOKBOX_AUDIT_URL;
  if (!url) return null;
  if (!env.HOOKBOX_AUDIT_KEY) {
    throw new Error(
      "HOOKBOX_AUDIT_URL is set but HOOKBOX_AUDIT_KEY (the service's admin key) is not",
    );
  }
  const binding = env.HOOKBOX_AUDIT;
  return createAuditPoster({
    url,
    key: env.HOOKBOX_AUDIT_KEY,
    ...(binding ? { fetch: (r: Request) => binding.fetch(r) } : {}),
  });
}
