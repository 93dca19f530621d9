/**
 * Builds the one-shot CLI: `dist/cli/hookbox.js` (packages/cli/main.ts and everything
 * it loads, bundled by esbuild into a few ES modules) and `dist/cli/hookbox`,
 * the command to register as an agent's hook command: a small C program
 * that starts Deno or answers a call through the user's daemon itself (a
 * shell script that starts Deno where there is no C compiler). An agent spawns
 * its hook command once per event; loading ~200 TypeScript modules and npm
 * packages one by one costs more than the hooks themselves (scripts/bench_cli.ts).
 *
 * The compilers (esbuild, AssemblyScript, Wizer) stay outside the bundle as
 * pinned `npm:` imports, loaded only when a hook's source changed. `serve`
 * and `bundle` run from source only. Paths to `plugins/` and `.cache/` are
 * found relative to the bundle, so it must stay at `dist/cli/` in the repo.
 *
 *   deno run -A scripts/build_cli.ts
 *
 * @module
 */
import * as esbuild from "esbuild";
import { rewriterSourceHash } from "../packages/deno/prepared_cache.ts";
import { discoverySourceHash } from "../packages/deno/scan_cache.ts";
import { onDemand, ZOD_ENGLISH_ONLY, ZOD_TRIMMED } from "../packages/deno/_esbuild_plugins.ts";

const ROOT = new URL("../", import.meta.url);
const OUT = new URL("dist/cli/", ROOT).pathname;
const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT)));
const imports: Record<string, string> = config.imports;

/** Packages loaded only to compile or serve: imported from npm at run time, never bundled. */
const EXTERNAL = [
  "esbuild",
  "assemblyscript",
  "typescript",
  "postgres",
  "prom-client",
  "wabt",
];

const HINTS_FLAG = "--experimental-wasm-compilation-hints";
const ONE_COMPILE_TASK = "--wasm-num-compilation-tasks=1";

const npmExternals: esbuild.Plugin = {
  name: "npm-externals",
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      const name = EXTERNAL.find((n) => args.path === n || args.path.startsWith(`${n}/`));
      // A compiler's package.json (its version names cache entries) is bundled:
      // an npm: import at run time sets up Deno's npm resolution (~2.5 ms).
      if (!name || args.path === `${name}/package.json`) return undefined;
      const spec = imports[name];
      if (!spec?.startsWith("npm:")) throw new Error(`deno.json has no npm: import for ${name}`);
      return { path: `${spec}${args.path.slice(name.length)}`, external: true };
    });
  },
};

/**
 * Packages a dispatch rarely needs, each its own module `dist/cli/NAME.js`
 * (built below): zod (an invalid event or a JSON hook output) and the RE2
 * engine (a matcher that is not plain words). Loading them cost ~4 ms of
 * every start, even deferred (`import defer` still loads and links a
 * module), so the dispatch path reaches them only through `_zod.ts` and
 * `_re2.ts`, which the bundle replaces with their `_on_demand` versions
 * (`onDemand`): a dynamic import, awaited where a dispatch finds it needs
 * one; this plugin makes those imports these modules.
 */
const ON_DEMAND = ["zod", "re2js"];

const onDemandPackages: esbuild.Plugin = {
  name: "on-demand-packages",
  setup(build) {
    build.onResolve(
      { filter: new RegExp(`^(${ON_DEMAND.join("|")})$`) },
      (args) => ({ path: `./${args.path}.js`, external: true }),
    );
  },
};

/**
 * `node:util` is imported for `parseArgs` alone, and in Deno the first
 * `node:` import sets up the Node compatibility layer (~8 ms of every
 * start). The bundle takes `parseArgs` from `@pkgjs/parseargs`, the Node
 * project's own polyfill of the same function, instead.
 */
const nodeUtilParseArgs: esbuild.Plugin = {
  name: "node-util-parseargs",
  setup(build) {
    build.onResolve(
      { filter: /^node:util$/ },
      () => ({ path: "node:util", namespace: "parseargs" }),
    );
    build.onLoad({ filter: /.*/, namespace: "parseargs" }, () => ({
      contents: `export { parseArgs } from "@pkgjs/parseargs";`,
      resolveDir: new URL(".", ROOT).pathname,
    }));
    // The polyfill's `internal/primordials.js` copies every property of some
    // forty built-ins when loaded (~4 ms of every start, most of it getters
    // such as Date's); the polyfill uses a few dozen of them. This stand-in
    // looks up each name it is asked for, by the same naming scheme.
    build.onLoad({ filter: /@pkgjs[\\/]parseargs[\\/]internal[\\/]primordials\.js$/ }, () => ({
      contents: `module.exports = new Proxy({}, { get: (_, name) => (${primordial})(name) });`,
      loader: "js",
    }));
  },
};

/**
 * One of Node's "primordials" by name: a global (`Map`), a static member
 * (`ObjectEntries`, `SymbolIterator`), a prototype method taking `this` first
 * (`ArrayPrototypePush`), or one taking `this` and an array of arguments
 * (`ArrayPrototypePushApply`). Serialised into the bundle.
 */
function primordial(name: string): unknown {
  const global = globalThis as unknown as Record<string, Record<string, unknown>>;
  if (typeof name !== "string") return undefined;
  if (/^[A-Z]\w*$/.test(name) && typeof global[name] === "function") return global[name];
  const m = /^((?:Weak)?[A-Z][a-z]+)(Prototype)?([A-Z]\w*?)(Apply)?$/.exec(name);
  const owner = m ? global[m[1]!] : undefined;
  const key = m ? m[3]!.charAt(0).toLowerCase() + m[3]!.slice(1) : "";
  const member = !owner
    ? undefined
    : m![2]
    ? (owner.prototype as Record<string, unknown>)[key]
    : owner[key];
  if (member === undefined) throw new Error(`primordials: no ${name}`);
  if (typeof member !== "function") return member;
  const fn = member as (...args: unknown[]) => unknown;
  if (!m![2]) return m![4] ? (args: unknown[]) => fn.apply(owner, args) : fn.bind(owner);
  return m![4]
    ? (self: unknown, args: unknown[]) => fn.apply(self, args)
    : (self: unknown, ...args: unknown[]) => fn.apply(self, args);
}

await Deno.remove(OUT, { recursive: true }).catch(() => {});
const result = await esbuild.build({
  entryPoints: { hookbox: new URL("packages/cli/main.ts", ROOT).pathname },
  bundle: true,
  splitting: true,
  format: "esm",
  // Browser builds of the dependencies (yaml's Node build is CommonJS that
  // requires node:process; Extism's loads the Node compatibility layer).
  platform: "browser",
  external: ["node:*"],
  target: "esnext",
  outdir: OUT,
  plugins: [npmExternals, onDemandPackages, onDemand(["zod", "re2"]), nodeUtilParseArgs],
  // Less for V8 to parse at every start.
  minify: true,
  define: {
    __HOOKBOX_BUNDLED__: "true",
    // Extism's bundled minimatch reads `process.platform` at load time; in
    // Deno the first touch of `process` loads the Node layer (~15 ms).
    process: "undefined",
    __HOOKBOX_REWRITER_HASH__: JSON.stringify(await rewriterSourceHash(new URL("packages/", ROOT))),
    __HOOKBOX_DISCOVERY_HASH__: JSON.stringify(
      await discoverySourceHash(new URL("packages/", ROOT)),
    ),
  },
  legalComments: "none",
  logLevel: "warning",
  metafile: true,
});
const packages = await Promise.all(ON_DEMAND.map((name) =>
  esbuild.build({
    stdin: {
      // zod has a default export, re2js none.
      contents: `export * from "${name}";${
        name === "zod" ? ` export { default } from "zod";` : ""
      }`,
      resolveDir: new URL(".", ROOT).pathname,
    },
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "esnext",
    outfile: `${OUT}${name}.js`,
    plugins: [ZOD_ENGLISH_ONLY, ZOD_TRIMMED],
    minify: true,
    legalComments: "none",
    logLevel: "warning",
    metafile: true,
  })
));
await esbuild.stop();
await hideDynamicImports(result.metafile);
const hints = await knownV8Flags([HINTS_FLAG, ONE_COMPILE_TASK]);
const wrapper = `${OUT}hookbox`;
// --liftoff-only: a one-shot process never profits from V8's optimising
// WebAssembly tier, whose background compilation costs ~15 MiB of peak memory.
// --min-semi-space-size=16: a young generation that holds a whole run, so
// start-up does not stop for scavenges (~3 ms, and less peak memory).
// --experimental-wasm-compilation-hints (when this V8 knows it): the QuickJS
// engine's hot functions are compiled with the module, on a V8 background
// thread while the CLI loads, not lazily on the first call (packages/rewriter/_hints.ts);
// --wasm-num-compilation-tasks=1: on one thread, so that on a small machine
// the main thread and its file and crypto work keep the other core.
// DENO_DIR: the checkout's own Deno cache, primed below with the compilers' npm packages, so a
// first compile never needs the network, even for an agent run with a private $HOME.
const v8Flags = ["--liftoff-only", "--min-semi-space-size=16", ...hints].join(",");
// The command is a small C program (packages/cli/client/hookbox_client.c) that starts Deno, or
// answers a call through the user's daemon without it; without a C compiler, a shell script that
// starts Deno (daemon calls then go through the CLI's own client). The script finds its folder
// without a subprocess unless it is run through a link.
if (!(await buildCommand(wrapper, v8Flags))) {
  await Deno.writeTextFile(
    wrapper,
    `#!/bin/sh\n# hookbox one-shot CLI (built by scripts/build_cli.ts)\n` +
      `case "$0" in */*) here="\${0%/*}" ;; *) here=. ;; esac\n` +
      `if [ -L "$0" ]; then here="$(dirname "$(readlink -f "$0")")"; fi\n` +
      `DENO_DIR="\${HOOKBOX_DENO_DIR:-$here/../../.cache/deno}" exec deno run -A --no-config ` +
      `--v8-flags=${v8Flags} "$here/hookbox.js" "$@"\n`,
  );
}
await primeCompilers();
await Deno.chmod(wrapper, 0o755);
const outputs: esbuild.Metafile["outputs"] = Object.assign(
  {},
  result.metafile.outputs,
  ...packages.map((p) => p.metafile.outputs),
);
const bytes = Object.values(outputs).reduce((n, o) => n + o.bytes, 0);
console.log(`${wrapper}: ${Object.keys(outputs).length} modules, ${bytes} bytes`);

/**
 * Compiles the command (packages/cli/client/hookbox_client.c) to `out` with
 * the machine's C compiler (`cc`, else `clang`) and `v8Flags` built in; false,
 * with a line saying so, when there is none or it fails.
 */
async function buildCommand(out: string, v8Flags: string): Promise<boolean> {
  if (!/^[\w,=.-]+$/.test(v8Flags)) throw new Error(`V8 flags not fit for a C string: ${v8Flags}`);
  const source = new URL("packages/cli/client/hookbox_client.c", ROOT).pathname;
  for (const compiler of ["cc", "clang"]) {
    const made = await new Deno.Command(compiler, {
      args: [
        "-O2",
        "-std=c11",
        "-Wall",
        "-Wextra",
        "-Werror",
        `-DHOOKBOX_V8_FLAGS="${v8Flags}"`,
        "-o",
        out,
        source,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output().catch(() => null);
    if (made?.success) return true;
    if (made !== null) {
      console.error(
        `build_cli: ${compiler} failed on ${source}:\n${new TextDecoder().decode(made.stderr)}`,
      );
    }
  }
  console.error("build_cli: no C compiler built the command; dist/cli/hookbox is a shell script");
  return false;
}

/**
 * Deno reads the whole static module graph before running anything, and that
 * graph takes in `import("...")` with a literal specifier too: every chunk a
 * command might load, and the `npm:` compilers behind them (which set up npm
 * resolution), were analysed at every start (~12 ms of `dispatch`, half of
 * `--help`). Each dynamic import the bundle makes is rewritten to
 * `import("" + "...")`, which Deno resolves only when the import runs.
 */
async function hideDynamicImports(metafile: esbuild.Metafile): Promise<void> {
  for (const [output, { imports }] of Object.entries(metafile.outputs)) {
    const dynamic = imports.filter((i) => i.kind === "dynamic-import");
    if (dynamic.length === 0) continue;
    const file = output.startsWith("/") ? output : `${Deno.cwd()}/${output}`;
    let code = await Deno.readTextFile(file);
    const specifiers = new Set(
      dynamic.map((i) => i.external ? i.path : `./${i.path.slice(i.path.lastIndexOf("/") + 1)}`),
    );
    for (const specifier of specifiers) {
      const literal = `import(${JSON.stringify(specifier)})`;
      if (!code.includes(literal)) throw new Error(`${output}: no ${literal} to hide`);
      code = code.replaceAll(literal, `import(""+${JSON.stringify(specifier)})`);
    }
    await Deno.writeTextFile(file, code);
  }
}

/** The V8 flags of `flags` this Deno accepts (an unknown flag stops `deno run`). */
async function knownV8Flags(flags: string[]): Promise<string[]> {
  const dir = await Deno.makeTempDir({ prefix: "hookbox-flag-probe-" });
  try {
    await Deno.writeTextFile(`${dir}/empty.js`, "");
    const known: string[] = [];
    for (const flag of flags) {
      const probe = await new Deno.Command(Deno.execPath(), {
        args: ["run", "--no-config", `--v8-flags=${flag}`, `${dir}/empty.js`],
        stdout: "null",
        stderr: "null",
      }).output();
      if (probe.success) known.push(flag);
    }
    return known;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * Fetches the compilers' npm packages (the `EXTERNAL` ones a compile loads)
 * into the checkout's Deno cache, `.cache/deno`, which the wrapper uses: the
 * bundled CLI compiles a hook offline once this build has run.
 */
async function primeCompilers(): Promise<void> {
  const denoDir = new URL(".cache/deno/", ROOT).pathname;
  const entry = `${OUT}_prime_compilers.js`;
  const compilers = ["esbuild", "assemblyscript", "typescript", "wabt"];
  await Deno.writeTextFile(entry, compilers.map((n) => `import "${imports[n]}";\n`).join(""));
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["cache", "--no-config", entry],
      env: { DENO_DIR: denoDir },
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!out.success) {
      throw new Error(`priming ${denoDir} failed: ${new TextDecoder().decode(out.stderr)}`);
    }
  } finally {
    await Deno.remove(entry).catch(() => {});
  }
  console.log(`${denoDir}: ${compilers.join(", ")} cached for offline compiles`);
}
