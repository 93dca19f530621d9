/**
 * `deno task npm [--out dist/npm]`: writes the npm package of the Web-API
 * core — ES modules and `.d.ts` types compiled by TypeScript from the same
 * sources, a `package.json` whose `exports["."]` is the core (`./node` the
 * Node file-system adapter, `./wasm` the module rewriter) and whose
 * dependencies are named with the versions `deno.json` pins. Nothing of the
 * Deno adapter goes in: the compilers and the CLI stay on Deno.
 *
 * A Node project then imports it by name:
 * `import { createCoreExecutor, createWasmRuntime } from "@hookbox/hookbox"`.
 */
import { parseArgs } from "node:util";
import ts from "typescript";

const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
/** Version of npm `@types/node` the ./node adapter is checked against (Node 20). */
const NODE_TYPES = "20.19.43";

/** The package's entry points: export path → source under packages/. */
export const ENTRIES: Record<string, string> = {
  ".": "hookbox/mod.ts",
  "./node": "hookbox/node.ts",
  "./wasm": "hookbox/wasm.ts",
};

/** What {@linkcode writeNpmPackage} wrote. */
export interface NpmSummary {
  out: string;
  files: number;
  dependencies: Record<string, string>;
}

/** Compiles the core into `out` (replaced) and writes its package.json and README. */
export async function writeNpmPackage(out: string): Promise<NpmSummary> {
  const config = {
    ...JSON.parse(await Deno.readTextFile(`${ROOT}/deno.json`)),
    ...JSON.parse(await Deno.readTextFile(`${ROOT}/packages/hookbox/deno.json`)),
  };
  await Deno.remove(out, { recursive: true }).catch(() => {});
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ["lib.es2023.d.ts", "lib.dom.d.ts", "lib.dom.iterable.d.ts"],
    // Node's types for the ./node adapter: npm @types/node, kept out of deno.json (Deno
    // would then check node:* against it instead of its own, newer, Node types).
    types: ["node"],
    typeRoots: [await nodeTypes()],
    declaration: true,
    allowImportingTsExtensions: true,
    rewriteRelativeImportExtensions: true,
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    noImplicitOverride: true,
    skipLibCheck: true,
    rootDir: `${ROOT}/packages`,
    outDir: `${out}/esm`,
    newLine: ts.NewLineKind.LineFeed,
  };
  const program = ts.createProgram(
    Object.values(ENTRIES).map((file) => `${ROOT}/packages/${file}`),
    options,
  );
  const written: string[] = [];
  const emit = program.emit(undefined, (file, text) => {
    // `new URL("./x.ts", import.meta.url)` names a module the package ships as x.js.
    const fixed = file.endsWith(".js")
      ? text.replace(
        /new URL\("(\.\.?\/[^"]+)\.ts", import\.meta\.url\)/g,
        'new URL("$1.js", import.meta.url)',
      )
      : text;
    Deno.mkdirSync(file.slice(0, file.lastIndexOf("/")), { recursive: true });
    Deno.writeTextFileSync(file, fixed);
    written.push(file);
  });
  const diagnostics = [...ts.getPreEmitDiagnostics(program), ...emit.diagnostics];
  if (diagnostics.length > 0) {
    throw new Error(ts.formatDiagnosticsWithColorAndContext(diagnostics, {
      getCanonicalFileName: (f) => f,
      getCurrentDirectory: () => ROOT,
      getNewLine: () => "\n",
    }));
  }
  const outside = written.filter((f) => !f.startsWith(`${out}/esm/`));
  if (outside.length > 0) throw new Error(`emitted outside the package: ${outside.join(", ")}`);
  const dependencies = dependenciesOf(written, config.imports as Record<string, string>);
  const exports: Record<string, { types: string; default: string }> = {};
  for (const [path, file] of Object.entries(ENTRIES)) {
    const base = `./esm/${file.replace(/\.ts$/, "")}`;
    exports[path] = { types: `${base}.d.ts`, default: `${base}.js` };
  }
  const pkg = {
    name: config.name,
    version: config.version,
    description:
      "Runs AI-agent lifecycle hooks in WebAssembly sandboxes with hard memory, CPU and time limits (the Web-API core).",
    type: "module",
    exports,
    types: exports["."]!.types,
    engines: { node: ">=20" },
    sideEffects: false,
    dependencies,
  };
  await Deno.writeTextFile(`${out}/package.json`, `${JSON.stringify(pkg, null, 2)}\n`);
  await Deno.writeTextFile(`${out}/README.md`, README);
  return { out, files: written.length, dependencies };
}

/** `@types/node` for Node 20, installed once under .cache with npm; returns its typeRoot. */
async function nodeTypes(): Promise<string> {
  const prefix = `${ROOT}/.cache/npm-types`;
  const root = `${prefix}/node_modules/@types`;
  const have = await Deno.readTextFile(`${root}/node/package.json`).then(
    (t) => JSON.parse(t).version === NODE_TYPES,
    () => false,
  );
  if (have) return root;
  const npm = await new Deno.Command("npm", {
    args: [
      "install",
      "--prefix",
      prefix,
      "--no-save",
      "--no-audit",
      "--no-fund",
      `@types/node@${NODE_TYPES}`,
    ],
    stdout: "null",
    stderr: "piped",
  }).output();
  if (npm.code !== 0) {
    throw new Error(`npm install @types/node failed: ${new TextDecoder().decode(npm.stderr)}`);
  }
  return root;
}

/** The npm packages the emitted modules import by bare name, with deno.json's versions. */
function dependenciesOf(files: string[], imports: Record<string, string>): Record<string, string> {
  const names = new Set<string>();
  for (const file of files.filter((f) => f.endsWith(".js") || f.endsWith(".d.ts"))) {
    const found = ts.preProcessFile(Deno.readTextFileSync(file), true, true);
    for (const { fileName: spec } of found.importedFiles) {
      if (spec.startsWith(".") || spec.startsWith("node:")) continue;
      const parts = spec.split("/");
      names.add(spec.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!);
    }
  }
  const out: Record<string, string> = {};
  for (const name of [...names].sort()) {
    const mapped = imports[name];
    const version = mapped?.match(/^npm:(?:@[^@/]+\/)?[^@]+@(.+)$/)?.[1];
    if (!version) throw new Error(`"${name}" is imported but deno.json pins no npm version for it`);
    out[name] = version;
  }
  return out;
}

const README = `# @hookbox/hookbox (Web-API core)

Runs AI-agent lifecycle hooks in WebAssembly sandboxes with hard memory, fuel (CPU) and output
limits, on Node 20+, Deno, and edge runtimes. This package is the core: executor, dispatch,
schemas, errors, the WebAssembly runtime and the HTTP service app. The compilers (JS/TS with
QuickJS, AssemblyScript), the CLI and \`hookbox serve\` are in the Deno project.

\`\`\`js
import { createCoreExecutor, createWasmRuntime } from "@hookbox/hookbox";
import { nodeFs } from "@hookbox/hookbox/node";

const executor = createCoreExecutor({
  fs: nodeFs,
  platformDirs: ["/srv/hooks"], // hook folders: HOOK.md + plugin.wasm
  runtimes: {
    wasm: createWasmRuntime({ loadBytes: ({ entry }) => nodeFs.readFile(entry.runtime === "wasm" ? entry.path : "", 8 << 20) }),
  },
});
const result = await executor.dispatch(event);
\`\`\`

Hooks written in JS/TS or AssemblyScript are compiled to \`plugin.wasm\` by the Deno CLI
(\`hookbox compile HOOK_DIR --out DIR\`), or prepared for a given policy by \`hookbox bundle\`
(load those with \`createWasmRuntime({ loadPrepared })\`).
`;

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: { out: { type: "string", default: `${ROOT}/dist/npm` } },
    strict: true,
  });
  const summary = await writeNpmPackage(values.out!);
  console.log(
    `wrote ${summary.out}: ${summary.files} files; dependencies ${
      Object.entries(summary.dependencies).map(([n, v]) => `${n}@${v}`).join(", ")
    }`,
  );
}
