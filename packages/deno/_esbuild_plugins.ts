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
    build.onLoad({ filter: /\/zod\/v4\/core\/compile\.js$/ }, async () => ({
      contents: await Deno.readTextFile(STUB("zod_compile.ts")),
      loader: "ts",
    }));
    build.onLoad({ filter: /\/zod\/v4\/classic\/from-json-schema\.js$/ }, async () => ({
      contents: await Deno.readTextFile(STUB("zod_from_json_schema.ts")),
      loader: "ts",
    }));
  },
};

/**
 * The core's schemas reach zod through `core/schema/_zod.ts` (and the RE2
 * engine through `_re2.ts`); this swaps in their `_on_demand` versions,
 * which load the package by a dynamic import awaited only where a call
 * finds it needs one (an invalid event, a JSON hook output, a regex). In
 * the one-shot CLI the packages are modules of their own; in a Worker,
 * bundled whole, their code is compiled and run only when first loaded.
 */
export function onDemand(packages: readonly ("zod" | "re2")[]): esbuild.Plugin {
  const schema = new URL("../core/schema/", import.meta.url).pathname;
  const filter = new RegExp(`(^|/)_(${packages.join("|")})\\.ts$`);
  return {
    name: `on-demand-${packages.join("-")}`,
    setup(build) {
      build.onResolve({ filter }, (args) => {
        const path = new URL(args.path, `file://${args.importer}`).pathname;
        const swapped = path.replace(/_(zod|re2)\.ts$/, "_$1_on_demand.ts");
        return path.startsWith(schema) && swapped !== path ? { path: swapped } : undefined;
      });
    },
  };
}

/** A stub module's path: real files in `stubs/`, which the type checker sees. */
const STUB = (name: string) => new URL(`./stubs/${name}`, import.meta.url).pathname;

/** One import replaced by a stub module of ours. */
interface Stub {
  /** Import paths to replace. */
  filter: RegExp;
  /** The stub's file name in `stubs/`. */
  file: string;
  /** Replace only imports made by importers this accepts (default: every one). */
  when?: (importer: string) => boolean;
}

function stub(build: esbuild.PluginBuild, s: Stub): void {
  build.onResolve(
    { filter: s.filter },
    (args) => s.when && !s.when(args.importer) ? undefined : { path: STUB(s.file) },
  );
}

/** Worker mode (a Web Worker per plugin thread) has no place in an edge Worker: left out. */
export const NO_WORKER_MODE: esbuild.Plugin = {
  name: "no-worker-mode",
  setup(build) {
    stub(build, { filter: /\/_worker_runtime\.ts$/, file: "worker_runtime.ts" });
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
    stub(build, { filter: /^re2js$/, file: "re2js.ts" });
  },
};

/**
 * `@extism/extism` (about 90 KB minified) left out of an edge Worker none of
 * whose plugins is loaded through it (`loadsThroughSdk`: JS and
 * AssemblyScript hooks and other WASI commands are plain instances): every
 * module in a Worker is compiled at start, used or not. Loading a plugin
 * that needs it then fails loudly.
 */
export const NO_EXTISM_SDK: esbuild.Plugin = {
  name: "no-extism-sdk",
  setup(build) {
    stub(build, { filter: /^@extism\/extism$/, file: "extism.ts" });
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
    stub(build, { filter: /^@hono\/zod-openapi$/, file: "zod_openapi.ts" });
    stub(build, { filter: /\/openapi\.ts$/, file: "openapi.ts" });
  },
};

/**
 * The service's route groups an edge Worker does not mount left out of it:
 * it serves `POST /v1/events` (the event routes) and `GET /healthz` (the
 * platform routes); the tenant, hook, audit and replay groups are empty
 * there (`stubs/edge_routes.ts`). About 29 KB of minified code fewer to
 * compile at every start (a 1,000-tenant Worker: ~5 ms in paired starts).
 */
export const EDGE_ROUTES_ONLY: esbuild.Plugin = {
  name: "edge-routes-only",
  setup(build) {
    stub(build, {
      filter: /^\.\/routes\/(tenants|hooks|audit|replay)\.ts$/,
      file: "edge_routes.ts",
      when: (importer) => importer.endsWith("/service/app.ts"),
    });
  },
};

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
      filter: /\/rewriter\/mod\.ts$/,
      when: (importer) => importer.includes("/runtime-wasm/"),
      file: "rewriter.ts",
    });
  },
};
