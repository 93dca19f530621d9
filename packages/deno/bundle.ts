/**
 * `hookbox bundle` (SPEC §7): writes a Worker for edge runtimes from the §6
 * store. Every plugin a bundled tenant can run is prepared here, once, under
 * that tenant's policy (validation, import policy, instrumentation, hashing)
 * and written as `plugins/<instrumented-sha256>.wasm`; the Worker imports
 * them as modules and loads them with no rewriter and no compilation.
 * Plugins that differ only in the data their memory starts with (every JS
 * hook: the QuickJS engine with its script's snapshot) share one module,
 * whatever their tenants' policies; their images go in `images.bin`, each as
 * what it differs in from the first of its module's (`shareCode` in the
 * runtime). The registry travels as `registry.bin`, JSON deflated, read on
 * the Worker's first request (keys as SHA-256 only).
 *
 * @module
 */
import * as esbuild from "esbuild";
import {
  EDGE_ROUTES_ONLY,
  NO_EXTISM_SDK,
  NO_OPENAPI,
  NO_REGEX_ENGINE,
  NO_REWRITER,
  NO_WORKER_MODE,
  onDemand,
  ZOD_ENGLISH_ONLY,
  ZOD_TRIMMED,
} from "./_esbuild_plugins.ts";
import { matcherNeedsRegexEngine } from "../core/schema/matcher.ts";
import { similarOrder } from "./_similar_order.ts";
import { deflateRawSync } from "node:zlib";
import { concatBytes } from "../core/bytes.ts";
import {
  BUNDLE_VERSION,
  type BundleData,
  deltaRuns,
  EDGE_MAX_MEMORY_MB,
  edgeTenant,
  encodeRuns,
  type ImagePlace,
  IMAGES_PER_CHUNK,
  preparedKey,
} from "../edge/bundle_data.ts";
import { isHookboxError } from "../core/errors.ts";
import { effectiveLimits } from "../core/policy.ts";
import { loadsThroughSdk, preparePlugin, restoreModule, trapModule } from "../runtime-wasm/mod.ts";
import { policyFor } from "../service/engine.ts";
import { type HookRow, PLATFORM, type Store, type TenantRow } from "../store/store.ts";

/** Options of {@linkcode writeBundle}. */
export interface BundleOptions {
  store: Store;
  /** Output folder (created; files in it are replaced). */
  out: string;
  /** Tenants to bundle. @default every tenant */
  tenants?: string[];
  /** Port of the `http` socket in `config.capnp`. @default 8787 */
  port?: number;
  /** workerd / Workers compatibility date. @default 2025-09-01 */
  compatibilityDate?: string;
  /**
   * The §6 service's `POST /v1/audit/ingest` URL: the Worker posts its audit
   * items there in batches (with the admin key from `HOOKBOX_AUDIT_KEY`)
   * instead of logging them. @default none: JSON lines on the log
   */
  auditUrl?: string;
}

/** What was written. */
export interface BundleSummary {
  tenants: string[];
  hooks: number;
  /** Plugins prepared, one per plugin and the limits it runs under. */
  plugins: number;
  /** Modules they were written as (plugins that differ only in data share one). */
  modules: number;
  failures: number;
  /**
   * Hooks (counted once per tenant that runs them) whose memory the Worker
   * lowers to {@linkcode EDGE_MAX_MEMORY_MB}.
   */
  memoryLowered: number;
  workerBytes: number;
  /** Bytes of `chunks/*.js`, the modules `worker.js` imports when a request first needs them. */
  chunkBytes: number;
}

const WORKER_ENTRY = new URL("../edge/worker.ts", import.meta.url).pathname;

/**
 * Writes `worker.js` and its `chunks/*.js`, `plugins/*.wasm`, `images.bin`,
 * `registry.bin`, `bundle.json` (the registry as text, to read),
 * `config.capnp` and `wrangler.toml`.
 */
export async function writeBundle(options: BundleOptions): Promise<BundleSummary> {
  const { store, out } = options;
  const chosen = await selectTenants(store, options.tenants);
  // A Worker runs each tenant under its policy with memory lowered to what an isolate can give.
  const tenants = chosen.map(edgeTenant);
  let memoryLowered = 0;
  const enabled = (rows: HookRow[]) => rows.filter((h) => h.enabled);
  const platform = enabled(await store.listHooks(PLATFORM));
  const data: BundleData = {
    version: BUNDLE_VERSION,
    created_at: new Date().toISOString(),
    tenants,
    keys: [],
    hooks: platform.map(stripSources),
    plugins: {},
    failures: {},
    trap: "",
    restore: "",
    images: {},
    chunks: [],
  };
  const files = new Map<string, Uint8Array>();
  const images = new Map<string, { module: string; runs: [number, Uint8Array][] }>();
  // The runtime's own small modules travel precompiled like the plugins.
  for (const [field, helper] of [["trap", trapModule], ["restore", restoreModule]] as const) {
    const { sha256, bytes } = await helper();
    data[field] = sha256;
    files.set(sha256, bytes);
  }
  const names = new Set(platform.map((h) => h.name));
  const owns: HookRow[][] = [];
  for (const tenant of tenants) {
    for (const hash of await store.liveKeyHashes(tenant.id)) {
      data.keys.push({ hash, tenant_id: tenant.id });
    }
    const own = enabled(await store.listHooks(tenant.id)).filter((h) => !names.has(h.name));
    data.hooks.push(...own.map(stripSources));
    owns.push(own);
  }
  // One engine module for every JS hook: it tracks writes when any hook runs warm.
  const warm = (rows: HookRow[]) =>
    rows.some((r) => r.runtime === "wasm" && r.manifest.isolation === "warm");
  const trackShared = warm(platform) || owns.some(warm);
  for (const [i, tenant] of tenants.entries()) {
    // What the tenant's policy asks for, before the Worker's lowering.
    const asked = policyFor(chosen[i]!.policy);
    for (const row of [...platform, ...owns[i]!]) {
      await prepareFor(store, tenant, row, data, files, images, trackShared);
      const memory = effectiveLimits(row.manifest, asked).memoryMb;
      if (row.runtime === "wasm" && memory > EDGE_MAX_MEMORY_MB) memoryLowered++;
    }
  }
  const imageBytes = packImages(images, data);
  const sdk = await needsExtismSdk(data, files);

  await Deno.mkdir(`${out}/plugins`, { recursive: true });
  for (const [sha, bytes] of files) await Deno.writeFile(`${out}/plugins/${sha}.wasm`, bytes);
  await Deno.writeFile(`${out}/images.bin`, imageBytes);
  const registry = JSON.stringify(data);
  await Deno.writeTextFile(`${out}/bundle.json`, registry);
  await Deno.writeFile(
    `${out}/registry.bin`,
    deflateRawSync(new TextEncoder().encode(registry), { level: 9 }),
  );
  const shas = [...files.keys()];
  const entry = `${out}/_entry.js`;
  await Deno.writeTextFile(
    entry,
    [
      `import { createEdgeWorker } from ${JSON.stringify(WORKER_ENTRY)};`,
      ...shas.map((sha, i) => `import m${i} from "./plugins/${sha}.wasm";`),
      `import images from "./images.bin";`,
      `import registry from "./registry.bin";`,
      `const modules = { ${shas.map((sha, i) => `"${sha}": m${i}`).join(", ")} };`,
      `export default createEdgeWorker(registry, modules, { images });`,
    ].join("\n"),
  );
  // Code a request may never need (zod, the Extism SDK) is a module of its own under `chunks/`,
  // imported when first needed: not linked or run at start (a 1,000-tenant Worker started ~11 ms
  // sooner with zod apart, paired starts in workerd).
  await Deno.remove(`${out}/${CHUNKS}`, { recursive: true }).catch(() => {});
  try {
    await esbuild.build({
      entryPoints: { worker: entry },
      outdir: out,
      splitting: true,
      chunkNames: `${CHUNKS}/[name]-[hash]`,
      bundle: true,
      format: "esm",
      platform: "browser",
      target: "es2022",
      conditions: ["workerd", "worker", "browser"],
      mainFields: ["browser", "module", "main"],
      external: ["./plugins/*", "./images.bin", "./registry.bin"],
      plugins: [
        ZOD_ENGLISH_ONLY,
        ZOD_TRIMMED,
        NO_WORKER_MODE,
        NO_OPENAPI,
        EDGE_ROUTES_ONLY,
        onDemand(["zod"]),
        NO_REWRITER,
        ...(data.hooks.some(needsRegex) ? [] : [NO_REGEX_ENGINE]),
        ...(sdk ? [] : [NO_EXTISM_SDK]),
      ],
      minify: true,
      legalComments: "none",
      logLevel: "silent",
    });
  } finally {
    await esbuild.stop();
    await Deno.remove(entry).catch(() => {});
  }
  const date = options.compatibilityDate ?? "2025-09-01";
  const audit = options.auditUrl === undefined ? null : new URL(options.auditUrl);
  if (audit && audit.protocol !== "http:" && audit.protocol !== "https:") {
    throw new Error(`--audit-url must be http or https, got ${audit.protocol}`);
  }
  const chunks = await chunkNames(out);
  await Deno.writeTextFile(
    `${out}/config.capnp`,
    capnp(shas, chunks, options.port ?? 8787, date, audit),
  );
  await Deno.writeTextFile(`${out}/wrangler.toml`, wrangler(date, audit));
  return {
    tenants: tenants.map((t) => t.id),
    hooks: data.hooks.length,
    plugins: Object.keys(data.plugins).length,
    // Without the trap and restorer helpers.
    modules: shas.length - 2,
    failures: Object.keys(data.failures).length,
    memoryLowered,
    workerBytes: (await Deno.stat(`${out}/worker.js`)).size,
    chunkBytes: (await Promise.all(chunks.map((c) => Deno.stat(`${out}/${c}`))))
      .reduce((sum, info) => sum + info.size, 0),
  };
}

/** True when one of the bundle's prepared plugins is loaded through `@extism/extism`. */
async function needsExtismSdk(
  data: BundleData,
  files: Map<string, Uint8Array>,
): Promise<boolean> {
  const seen = new Map<string, WebAssembly.Module>();
  for (const plugin of Object.values(data.plugins)) {
    let module = seen.get(plugin.instrumentedSha256);
    if (module === undefined) {
      const bytes = files.get(plugin.instrumentedSha256)!;
      module = await WebAssembly.compile(bytes as BufferSource);
      seen.set(plugin.instrumentedSha256, module);
    }
    if (loadsThroughSdk(module, plugin.abi, plugin.entry)) return true;
  }
  return false;
}

/** True when one of the hook's matchers needs the RE2 engine in the Worker. */
function needsRegex(hook: HookRow): boolean {
  return matcherNeedsRegexEngine(hook.manifest.matcher);
}

async function selectTenants(store: Store, ids: string[] | undefined): Promise<TenantRow[]> {
  if (ids === undefined || ids.length === 0) return await store.listTenants();
  const found: TenantRow[] = [];
  for (const id of ids) {
    const tenant = await store.getTenant(id);
    if (tenant === null) throw new Error(`no tenant "${id}" in the store`);
    found.push(tenant);
  }
  return found;
}

/**
 * The Worker never needs a hook's sources, nor the Markdown body of a hook
 * that is not a prompt hook: only what it runs.
 */
function stripSources(row: HookRow): HookRow {
  return { ...row, sources: {}, body: row.runtime === "prompt" ? row.body : "" };
}

async function prepareFor(
  store: Store,
  tenant: TenantRow,
  row: HookRow,
  data: BundleData,
  files: Map<string, Uint8Array>,
  images: Map<string, { module: string; runs: [number, Uint8Array][] }>,
  trackShared: boolean,
): Promise<void> {
  if (row.runtime !== "wasm") return;
  const limits = effectiveLimits(row.manifest, policyFor(tenant.policy));
  const key = preparedKey(row.sha256, limits, row.manifest.isolation);
  if (data.plugins[key] !== undefined || data.failures[key] !== undefined) return;
  const bytes = await store.getBlob(row.sha256);
  if (bytes === null) throw new Error(`plugin ${row.sha256} of "${row.name}" is missing`);
  try {
    const { bytes: instrumented, runs, ...meta } = await preparePlugin(bytes, {
      limits,
      isolation: row.manifest.isolation,
      sha256: row.manifest.sha256,
      path: `${row.name}/plugin.wasm`,
      shareCode: true,
      trackShared,
    });
    data.plugins[key] = meta;
    files.set(meta.instrumentedSha256, instrumented);
    if (runs !== undefined && !images.has(meta.sha256)) {
      images.set(meta.sha256, { module: meta.instrumentedSha256, runs });
    }
  } catch (err) {
    if (!isHookboxError(err)) throw err;
    data.failures[key] = { code: err.code, message: err.message };
  }
}

/**
 * `images.bin`: per shared module, the first plugin's image whole (its
 * base, a chunk of its own), and each plugin's runs against that base (the
 * first's: none), {@linkcode IMAGES_PER_CHUNK} to a chunk, similar runs
 * side by side; each chunk compressed on its own. Where each is goes in
 * `data.images` and `data.chunks`.
 */
function packImages(
  images: Map<string, { module: string; runs: [number, Uint8Array][] }>,
  data: BundleData,
): Uint8Array {
  const chunks: Uint8Array[][] = [];
  const place = (chunk: number, bytes: Uint8Array): ImagePlace => {
    const parts = chunks[chunk]!;
    const at = parts.reduce((sum, p) => sum + p.length, 0);
    parts.push(bytes);
    return { chunk, at };
  };
  const bases = new Map<string, { place: ImagePlace; runs: [number, Uint8Array][] }>();
  const owns: { sha: string; base: ImagePlace; runs: Uint8Array }[] = [];
  for (const [sha, { module, runs }] of images) {
    let base = bases.get(module);
    if (base === undefined) {
      chunks.push([]);
      bases.set(module, base = { place: place(chunks.length - 1, encodeRuns(runs)), runs });
    }
    owns.push({ sha, base: base.place, runs: encodeRuns(deltaRuns(base.runs, runs)) });
  }
  // Similar runs side by side, where deflate's window finds what they share (_similar_order.ts).
  const placed = new Map<string, ImagePlace>();
  let open = -1; // the chunk plugins' own runs go to
  for (const i of similarOrder(owns.map((own) => own.runs))) {
    if (open < 0 || chunks[open]!.length >= IMAGES_PER_CHUNK) open = chunks.push([]) - 1;
    placed.set(owns[i]!.sha, place(open, owns[i]!.runs));
  }
  for (const own of owns) data.images[own.sha] = { base: own.base, own: placed.get(own.sha)! };
  // What such a plugin holds of its own in a Worker: its runs against the base. The kept-plugin
  // cap counts it: the Worker compiles every module it declares at start, so a thousand hooks
  // counted as a thousand 1.3 MB engines went past the cap and let each other go on every call.
  const ownBytes = new Map(owns.map((own) => [own.sha, own.runs.byteLength]));
  for (const meta of Object.values(data.plugins)) {
    const bytes = ownBytes.get(meta.sha256);
    if (bytes !== undefined) meta.byteLength = bytes;
  }
  const size = (parts: Uint8Array[]) => parts.reduce((sum, p) => sum + p.length, 0);
  const packed = chunks.map((parts) =>
    deflateRawSync(concatBytes(parts, size(parts)), { level: 9 })
  );
  let at = 0;
  for (const chunk of packed) {
    data.chunks.push([at, chunk.length]);
    at += chunk.length;
  }
  return concatBytes(packed, at);
}

/** The folder of `worker.js`'s modules loaded on demand. */
const CHUNKS = "chunks";

/** The modules esbuild wrote to `out/chunks` (paths relative to `out`), sorted. */
async function chunkNames(out: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const e of Deno.readDir(`${out}/${CHUNKS}`)) {
      if (e.isFile && e.name.endsWith(".js")) names.push(`${CHUNKS}/${e.name}`);
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return names.sort();
}

function capnp(
  shas: string[],
  chunks: string[],
  port: number,
  date: string,
  audit: URL | null,
): string {
  // The audit service is reached through its own binding: the Worker's global
  // fetch (and so the hooks' granted HTTP) stays on the default network.
  const auditService = audit
    ? `\n  (name = "audit", external = (address = ${
      JSON.stringify(`${audit.hostname}:${audit.port || (audit.protocol === "https:" ? 443 : 80)}`)
    }, ${audit.protocol === "https:" ? "https" : "http"} = ())),`
    : "";
  const bindings = audit
    ? `
  bindings = [
    (name = "HOOKBOX_AUDIT_URL", text = ${JSON.stringify(audit.href)}),
    (name = "HOOKBOX_AUDIT_KEY", fromEnvironment = "HOOKBOX_AUDIT_KEY"),
    (name = "HOOKBOX_AUDIT", service = "audit"),
  ],`
    : "";
  const modules = [
    `    (name = "worker.js", esModule = embed "worker.js"),`,
    ...chunks.map((name) => `    (name = "${name}", esModule = embed "${name}"),`),
    `    (name = "images.bin", data = embed "images.bin"),`,
    `    (name = "registry.bin", data = embed "registry.bin"),`,
    ...shas.map((sha) => `    (name = "plugins/${sha}.wasm", wasm = embed "plugins/${sha}.wasm"),`),
  ];
  return `# workerd config written by \`hookbox bundle\`: workerd serve config.capnp
# [--socket-addr http=127.0.0.1:PORT]
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  # WebAssembly functions are compiled when first called, not at start: a Worker
  # whose first events use small plugins does not wait for the QuickJS engine.
  v8Flags = [ "--wasm-lazy-compilation" ],
  services = [ (name = "main", worker = .hookbox),${auditService} ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);

const hookbox :Workerd.Worker = (
  modules = [
${modules.join("\n")}
  ],
  compatibilityDate = "${date}",${bindings}
);
`;
}

function wrangler(date: string, audit: URL | null): string {
  const vars = audit
    ? `
# Audit items are posted to the hookbox service; give the Worker its admin key:
#   wrangler secret put HOOKBOX_AUDIT_KEY
[vars]
HOOKBOX_AUDIT_URL = ${JSON.stringify(audit.href)}
`
    : "";
  return `# Cloudflare deployment of the same bundle, written by \`hookbox bundle\`:
# wrangler deploy (from this folder)
name = "hookbox"
main = "worker.js"
compatibility_date = "${date}"
no_bundle = true

# Each rule falls through to wrangler's default rule of its type (**/*.wasm, **/*.bin), which
# wrangler refuses to leave unapplied.
[[rules]]
type = "CompiledWasm"
globs = ["plugins/*.wasm"]
fallthrough = true

[[rules]]
type = "ESModule"
globs = ["${CHUNKS}/*.js"]
fallthrough = true

[[rules]]
type = "Data"
globs = ["images.bin", "registry.bin"]
fallthrough = true
${vars}`;
}
