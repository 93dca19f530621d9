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

/** Worker mode (a Web Worker per plugin thread) has no place in an edge Worker: left out. */
export const NO_WORKER_MODE: esbuild.Plugin = {
  name: "no-worker-mode",
  setup(build) {
    build.onResolve({ filter: /\/_worker_runtime\.ts$/ }, (args) => ({
      path: args.path,
      namespace: "no-worker-mode",
    }));
    build.onLoad({ filter: /.*/, namespace: "no-worker-mode" }, () => ({
      contents: `export class WorkerRuntime {
  constructor() { throw new Error("worker mode is not available in an edge bundle"); }
}`,
      loader: "js",
    }));
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
    build.onResolve({ filter: /^re2js$/ }, (args) => ({ path: args.path, namespace: "no-re2" }));
    build.onLoad({ filter: /.*/, namespace: "no-re2" }, () => ({
      contents: `export const RE2JS = {
  compile() {
    throw new Error("this edge bundle has no regex engine: its matchers were all plain words when it was built; bundle again");
  },
};`,
      loader: "js",
    }));
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
    build.onResolve({ filter: /^@hono\/zod-openapi$/ }, (args) => ({
      path: args.path,
      namespace: "zod-plain",
      pluginData: args.resolveDir,
    }));
    build.onLoad({ filter: /.*/, namespace: "zod-plain" }, (args) => ({
      contents: `import { z } from "zod";
if (z.ZodType.prototype.openapi === undefined) z.ZodType.prototype.openapi = function () { return this; };
export { z };`,
      resolveDir: args.pluginData as string,
      loader: "js",
    }));
    build.onResolve({ filter: /\/openapi\.ts$/ }, (args) => ({
      path: args.path,
      namespace: "no-openapi",
    }));
    build.onLoad({ filter: /.*/, namespace: "no-openapi" }, () => ({
      contents: `export function openApiDocument() {
  throw new Error("an edge Worker does not serve the OpenAPI document; the hookbox service does");
}`,
      loader: "js",
    }));
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
    build.onResolve(
      { filter: /\/wasm\/mod\.ts$/ },
      (args) =>
        args.importer.includes("/runtime/wasm/")
          ? { path: args.path, namespace: "no-rewriter" }
          : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "no-rewriter" }, () => ({
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
    }));
  },
};
