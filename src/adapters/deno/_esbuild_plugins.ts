/**
 * esbuild plugins shared by the bundles hookbox builds: the edge Worker
 * (`hookbox bundle`) and the one-shot CLI (`scripts/build_cli.ts`).
 *
 * @module
 */
import type * as esbuild from "esbuild";

/**
 * zod re-exports every locale as `z.locales` (about 400 KB minified) and
 * registers English itself; hookbox never switches locale, so the Worker gets
 * English only.
 */
export const ZOD_ENGLISH_ONLY: esbuild.Plugin = {
  name: "zod-english-only",
  setup(build) {
    build.onResolve(
      { filter: /\/locales\/index\.js$/ },
      (args) =>
        /\/zod\/v4\/(core|classic|mini)\//.test(args.importer)
          ? { path: args.importer.replace(/\/v4\/.*$/, "/v4/locales/en.js"), namespace: "zod-en" }
          : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "zod-en" }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.path)};`,
      resolveDir: "/",
    }));
  },
};

/**
 * Two parts of zod hookbox never calls left out of its bundles (about 41 KB
 * minified, compiled at every start of a Worker or the one-shot CLI): schema
 * compilation to functions (`z.compile`, which needs `new Function` — refused
 * in Workers anyway) and `z.fromJSONSchema`. Only re-exported by zod's index
 * modules, nothing runs them at load; calling one fails loudly.
 */
export const ZOD_TRIMMED: esbuild.Plugin = {
  name: "zod-trimmed",
  setup(build) {
    build.onLoad({ filter: /\/zod\/v4\/core\/compile\.js$/ }, () => ({
      contents:
        `const absent = () => { throw new Error("zod's compile() is not in this hookbox bundle"); };
export const INVALID = Symbol.for("zod.compile.invalid");
export class ZodCompileAsyncError extends Error {}
export class ZodCompileUnsupportedError extends Error {}
export const compile = absent;
export const withParser = absent;
export const compileFn = absent;`,
      loader: "js",
    }));
    build.onLoad({ filter: /\/zod\/v4\/classic\/from-json-schema\.js$/ }, () => ({
      contents: `export function fromJSONSchema() {
  throw new Error("zod's fromJSONSchema() is not in this hookbox bundle");
}`,
      loader: "js",
    }));
  },
};

/** One import replaced by a module of ours, loaded from its own namespace. */
interface Stub {
  /** The namespace the replaced imports resolve into. */
  namespace: string;
  /** Import paths to replace. */
  filter: RegExp;
  /** Source of the replacement. */
  contents: string;
  /** Replace only imports made by importers this accepts (default: every one). */
  when?: (importer: string) => boolean;
  loader?: "js" | "ts";
  /** Where the replacement's own imports resolve from (default: the importer's directory). */
  resolveDir?: string;
}

function stub(build: esbuild.PluginBuild, s: Stub): void {
  build.onResolve({ filter: s.filter }, (args) =>
    s.when && !s.when(args.importer) ? undefined : {
      path: args.path,
      namespace: s.namespace,
      pluginData: s.resolveDir ?? args.resolveDir,
    });
  build.onLoad({ filter: /.*/, namespace: s.namespace }, (args) => ({
    contents: s.contents,
    loader: s.loader ?? "js",
    resolveDir: args.pluginData as string,
  }));
}

/** Worker mode (a Web Worker per plugin thread) has no place in an edge Worker: left out. */
export const NO_WORKER_MODE: esbuild.Plugin = {
  name: "no-worker-mode",
  setup(build) {
    stub(build, {
      namespace: "no-worker-mode",
      filter: /\/_worker_runtime\.ts$/,
      contents: `export class WorkerRuntime {
  constructor() { throw new Error("worker mode is not available in an edge bundle"); }
}`,
    });
  },
};

/**
 * The RE2 engine (npm `re2js`, about 150 KB minified) left out of an edge
 * Worker whose matchers are all plain words (`^(Bash|Shell)$`, matched as
 * string comparisons without it): every module in a Worker is compiled at
 * start, used or not. Compiling a pattern that needs it then fails loudly.
 */
export const NO_REGEX_ENGINE: esbuild.Plugin = {
  name: "no-regex-engine",
  setup(build) {
    stub(build, {
      namespace: "no-re2",
      filter: /^re2js$/,
      contents: `export const RE2JS = {
  compile() {
    throw new Error("this edge bundle has no regex engine: its matchers were all plain words when it was built; bundle again");
  },
};`,
    });
  },
};

/**
 * The OpenAPI generator left out of an edge Worker, which serves only `POST
 * /v1/events` and `GET /healthz` (SPEC §7): the service's schemas import
 * `z` from `@hono/zod-openapi` for the route metadata their `.openapi()`
 * calls attach; in the Worker they get plain zod, where `.openapi()` hands
 * the schema back unchanged (validation is the same), and `openapi.ts`
 * refuses to build a document. About 40 KB of minified code fewer to compile
 * at every start.
 */
export const NO_OPENAPI: esbuild.Plugin = {
  name: "no-openapi",
  setup(build) {
    stub(build, {
      namespace: "zod-plain",
      filter: /^@hono\/zod-openapi$/,
      contents: `import { z } from "zod";
if (z.ZodType.prototype.openapi === undefined) z.ZodType.prototype.openapi = function () { return this; };
export { z };`,
    });
    stub(build, {
      namespace: "no-openapi",
      filter: /\/openapi\.ts$/,
      contents: `export function openApiDocument() {
  throw new Error("an edge Worker does not serve the OpenAPI document; the hookbox service does");
}`,
    });
  },
};

/** Where the module rewriter's sources are. */
const REWRITER_DIR = new URL("../../wasm/", import.meta.url).pathname;

/**
 * The module rewriter left out of an edge Worker: the Worker loads plugins
 * prepared (validated and instrumented) by `hookbox bundle`, so the runtime
 * keeps only the rewriter's constants (export names, the write-tracking page
 * size, table limits); inspecting or instrumenting a module there fails
 * loudly. About 28 KB of minified code fewer to compile at every start.
 */
export const NO_REWRITER: esbuild.Plugin = {
  name: "no-rewriter",
  setup(build) {
    stub(build, {
      namespace: "no-rewriter",
      filter: /\/wasm\/mod\.ts$/,
      when: (importer) => importer.includes("/runtime/wasm/"),
      contents: `export { MAX_TABLE_ENTRIES, TABLE_ENTRY_BYTES } from "./_limits.ts";
export { NAMES as HOOKBOX_EXPORTS } from "./_plan.ts";
export { PAGE_SHIFT as WRITE_PAGE_SHIFT, STRADDLE as WRITE_STRADDLE } from "./_writes.ts";
const absent = () => {
  throw new Error("an edge Worker loads prepared plugins only: it has no module rewriter");
};
export const inspectModule = absent;
export const instrumentModule = absent;`,
      loader: "ts",
      resolveDir: REWRITER_DIR,
    });
  },
};
