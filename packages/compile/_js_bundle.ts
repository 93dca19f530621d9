/**
 * Bundles a JS/TS hook with esbuild into one script the engine evaluates.
 *
 * The entry is imported from a virtual module, so the bundle has no exports.
 * The ESM output is wrapped in a function called at once: an async one when
 * the code uses top-level await (QuickJS 2021-03-27 has none of its own), a
 * plain one otherwise — the engine then has no promise to track, so a script
 * hook's call skips the async-function and promise machinery (a sync throw
 * ends the script as an uncaught error, as in Node). Node built-ins resolve
 * to the prelude's shims or fail with COMPILE_API_DENIED.
 *
 * @module
 */
import type * as esbuild from "esbuild";
import type { LineTable } from "../core/runtime/lines.ts";
import { lineTable } from "./_js_lines.ts";
import { HookboxError, isHookboxError } from "../core/errors.ts";
import { isInside } from "../core/host.ts";
import { MAX_SOURCE_BYTES } from "../core/hook/files.ts";
import {
  ALLOWED_BUILTINS,
  BUILTIN_EXPORTS,
  BUILTIN_FILTER,
  classifyBuiltin,
} from "./_js_builtins.ts";

/** Path the hook sees as its own (process.argv[1], import.meta.url, __filename). */
export const HOOK_PATH = "/hook/scripts/run.js";

/** Longest path a file can have (Linux's `PATH_MAX`), in characters at most. */
export const MAX_PATH_CHARS = 4096;

/**
 * Deepest nesting of brackets a bundled file may have. esbuild's parser
 * recurses: a million levels (2 MB of `[`) end its process at its stack's
 * limit, after a gigabyte and a 30 KB crash report on this process's stderr.
 */
export const MAX_NESTING = 10_000;

/**
 * The deepest nesting of `(`, `[` and `{` in `text`, strings and comments
 * included (an upper bound on what the parser nests).
 */
function nesting(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 40 || c === 91 || c === 123) {
      if (++depth > deepest) deepest = depth;
    } else if ((c === 41 || c === 93 || c === 125) && depth > 0) depth--;
  }
  return deepest;
}

function tooDeep(path: string, depth: number): HookboxError {
  return new HookboxError(
    "COMPILE_FAILED",
    `${path} nests brackets ${depth} deep, over the ${MAX_NESTING} the bundler takes`,
    { path },
  );
}

/** Most files one bundle reads (the entry and everything it imports). */
export const MAX_BUNDLE_FILES = 2000;
/** Most bytes one bundle reads, all its files together. */
export const MAX_BUNDLE_BYTES = 16 * 1024 * 1024;

/**
 * Refuses to load files outside `roots` (compile-time reads of host files),
 * and anything esbuild could not read in bounded time and memory: a file
 * that is not a regular file (a FIFO would block the read forever, a device
 * never end), one over {@linkcode MAX_SOURCE_BYTES}, more than
 * {@linkcode MAX_BUNDLE_FILES} files or {@linkcode MAX_BUNDLE_BYTES} in all.
 */
function confinePlugin(roots: readonly string[], denied: string[]): esbuild.Plugin {
  return {
    name: "hookbox-confine",
    setup(build) {
      let files = 0;
      let bytes = 0;
      const refuse = (text: string) => ({ errors: [{ text }] });
      const checked = new Set<string>();
      build.onResolve({ filter: /^\.\.?\// }, async (args) => {
        if (args.namespace !== "file" || !args.resolveDir) return undefined;
        const target = normalise(`${args.resolveDir}/${args.path}`);
        try {
          await checkPackageFiles([target.replace(/\/[^/]*$/, "") || "/"], checked);
        } catch (err) {
          return refuse((err as Error).message);
        }
        return undefined;
      });
      build.onLoad({ filter: /.*/, namespace: "file" }, async (args) => {
        if (!roots.some((root) => isInside(args.path, root))) {
          denied.push(args.path);
          return refuse(
            `${args.path} is outside the hook folder; a hook may import only its own files ` +
              `and hookbox's plugins/ library`,
          );
        }
        const info = await Deno.stat(args.path);
        if (!info.isFile) return refuse(`${args.path} is not a regular file`);
        if (info.size > MAX_SOURCE_BYTES) {
          return refuse(
            `${args.path} is ${info.size} bytes, over the ${MAX_SOURCE_BYTES}-byte cap`,
          );
        }
        if (++files > MAX_BUNDLE_FILES) {
          return refuse(`the hook imports more than ${MAX_BUNDLE_FILES} files`);
        }
        if ((bytes += info.size) > MAX_BUNDLE_BYTES) {
          return refuse(`the hook's files are over ${MAX_BUNDLE_BYTES} bytes together`);
        }
        const depth = nesting(await Deno.readTextFile(args.path));
        if (depth > MAX_NESTING) return refuse(tooDeep(args.path, depth).message);
        return undefined;
      });
    },
  };
}

/**
 * Refuses an import whose specifier is longer than any path can be, before
 * anything resolves it: every folder of such a path is looked at (here for
 * `package.json`, and by esbuild, which also tries `node_modules` under
 * each). A relative import 200 KB long took 1.8 GB here; a bare or absolute
 * one kept esbuild busy past the build's deadline, so that the hooks after
 * it in the same call were not built.
 */
function pathLengthPlugin(): esbuild.Plugin {
  return {
    name: "hookbox-path-length",
    setup(build) {
      build.onResolve({ filter: /.*/ }, (args) => {
        if (args.path.length <= MAX_PATH_CHARS) return undefined;
        return {
          errors: [{
            text: `the import of ${JSON.stringify(args.path.slice(0, 64))}… is ` +
              `${args.path.length} characters long, over the ${MAX_PATH_CHARS} a path can have`,
          }],
        };
      });
    },
  };
}

/** hookbox's JS library for hooks (`plugins/lib/`), imported as `hookbox:lib/NAME.js`. */
const LIBRARY = new URL("../../plugins/lib/", import.meta.url).pathname;

/** `hookbox:lib/NAME.js`: a module of hookbox's library, wherever the hook folder sits. */
const LIBRARY_SPECIFIER = /^hookbox:lib\/([a-z0-9_]+\.js)$/;

/**
 * Resolves `hookbox:` imports to hookbox's own library, so a hook that uses
 * it works wherever its folder is copied (a relative path into `plugins/`
 * would escape the folder). Anything else under `hookbox:` is refused.
 */
function libraryPlugin(): esbuild.Plugin {
  return {
    name: "hookbox-library",
    setup(build) {
      build.onResolve({ filter: /^hookbox:/ }, async (args) => {
        const name = LIBRARY_SPECIFIER.exec(args.path)?.[1];
        const path = name === undefined ? null : `${LIBRARY}${name}`;
        if (path !== null && (await Deno.stat(path).catch(() => null))?.isFile) return { path };
        return {
          errors: [{
            text: `${args.path} is not in hookbox's library; it offers hookbox:lib/NAME.js for ` +
              `the files of plugins/lib/ (${await libraryNames()})`,
          }],
        };
      });
    },
  };
}

async function libraryNames(): Promise<string> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(LIBRARY)) {
    if (entry.name.endsWith(".js")) names.push(entry.name);
  }
  return names.sort().join(", ");
}

function builtinsPlugin(denied: string[]): esbuild.Plugin {
  return {
    name: "hookbox-builtins",
    setup(build) {
      build.onResolve({ filter: BUILTIN_FILTER }, (args) => {
        const { kind, id } = classifyBuiltin(args.path);
        if (kind === "other") return undefined;
        if (kind === "allowed") {
          // require("fs") is left to the prelude's global require at run time (no
          // per-run module wrapper); an import reads named exports off the object.
          if (args.kind === "require-call") return { path: args.path, external: true };
          const esm = (BUILTIN_EXPORTS as Record<string, readonly string[]>)[id] !== undefined;
          return { path: id, namespace: esm ? "hookbox-builtin-esm" : "hookbox-builtin" };
        }
        denied.push(id);
        return {
          errors: [{
            text: `${id} is not available in the sandbox (hookbox provides: ${
              ALLOWED_BUILTINS.join(", ")
            })`,
          }],
        };
      });
      build.onLoad({ filter: /.*/, namespace: "hookbox-builtin" }, (args) => ({
        contents: `module.exports = globalThis.__hookbox_require(${JSON.stringify(args.path)});`,
        loader: "js",
      }));
      build.onLoad({ filter: /.*/, namespace: "hookbox-builtin-esm" }, (args) => {
        const names = (BUILTIN_EXPORTS as Record<string, readonly string[]>)[args.path]!;
        return {
          contents: `const m = globalThis.__hookbox_require(${JSON.stringify(args.path)});\n` +
            `export default m;\n` +
            // One statement per name, each marked pure: esbuild drops the ones not imported.
            names.map((n) => `export const ${n} = /* @__PURE__ */ (() => m.${n})();\n`).join(""),
          loader: "js",
        };
      });
    },
  };
}

function splitPath(entryPath: string): { dir: string; file: string } {
  const i = entryPath.lastIndexOf("/");
  return i < 0
    ? { dir: ".", file: entryPath }
    : { dir: entryPath.slice(0, i) || "/", file: entryPath.slice(i + 1) };
}

/**
 * First line of the bundle of a function-style hook: the engine evaluates
 * such a bundle once at snapshot time and then calls its default export per
 * event (plugins/engine/engine.c checks for exactly this text).
 */
export const FUNCTION_MARKER = "//hookbox:function\n";

/** The stdin entry: run the script, or register its default export as the hook function. */
function entrySource(file: string, functionStyle: boolean): string {
  const spec = JSON.stringify(`./${file}`);
  return functionStyle
    ? `import __hookbox_hook from ${spec};\nglobalThis.__hookbox_function = __hookbox_hook;`
    : `import ${spec};`;
}

function buildOptions(
  entryPath: string,
  roots: readonly string[],
  denied: string[],
  functionStyle: boolean,
): esbuild.BuildOptions {
  const { dir, file } = splitPath(entryPath);
  return {
    stdin: {
      contents: entrySource(file, functionStyle),
      resolveDir: dir,
      loader: "js",
      sourcefile: "hookbox-entry.js",
    },
    absWorkingDir: dir, // keeps path comments in the bundle (and so the cache key) cwd-independent
    // No tsconfig.json is read: a hook compiles the same wherever its folder sits, and a
    // repository's tsconfig (a FIFO, say, which blocks the read) cannot reach the build.
    tsconfigRaw: "{}",
    bundle: true,
    write: false,
    format: "esm",
    platform: "node",
    target: "es2020",
    supported: { "top-level-await": true },
    charset: "utf8",
    legalComments: "none",
    // Where each line came from (the map's sources are relative to the entry's folder).
    sourcemap: "external",
    sourcesContent: false,
    outfile: `${dir}/hook.js`,
    logLevel: "silent",
    define: {
      "import.meta.url": JSON.stringify(`file://${HOOK_PATH}`),
      "import.meta.filename": JSON.stringify(HOOK_PATH),
      "import.meta.dirname": JSON.stringify(HOOK_PATH.replace(/\/[^/]*$/, "")),
      "import.meta.main": "true",
    },
    plugins: [
      pathLengthPlugin(),
      libraryPlugin(),
      builtinsPlugin(denied),
      confinePlugin(roots, denied),
    ],
  };
}

function failure(err: unknown, entryPath: string, denied: string[]): HookboxError {
  const messages = (err as { errors?: esbuild.Message[] }).errors ?? [];
  const text =
    messages.map((m) => `${m.location ? `${m.location.file}:${m.location.line}: ` : ""}${m.text}`)
      .join("\n") || stopped(String(err));
  const code = denied.length > 0 ? "COMPILE_API_DENIED" : "COMPILE_FAILED";
  return new HookboxError(code, text, { path: entryPath, cause: err });
}

/**
 * esbuild's words when its process ended under a build, with the likely
 * cause: its parser recurses, and a source nested a million levels deep
 * (2 MB of `[`) ends the process at its stack's limit (1 GB) in about 2 s.
 */
function stopped(text: string): string {
  if (!/The service (was stopped|is no longer running)/.test(text)) return text;
  return `the bundler (esbuild) ended before it finished (${text.replace(/^Error: /, "")}): a ` +
    "source nested too deeply for its parser ends it, as does another build of this process " +
    "that ran past its deadline";
}

/**
 * Bundles `entryPath` (absolute, symlinks resolved) into the script text the
 * engine compiles to bytecode. Every file the bundle reads must lie inside one
 * of `roots` (absolute, symlinks resolved).
 */
export async function bundleJsHook(entryPath: string, roots: readonly string[]): Promise<string> {
  return (await bundleJsHookWithInputs(entryPath, roots)).code;
}

/** Time one bundling may take before esbuild is stopped. */
export const BUNDLE_DEADLINE_MS = 60_000;

/**
 * Package files esbuild reads in every folder above the files it resolves;
 * one that is not a regular file (a FIFO blocks the read) or is over 1 MiB
 * is refused before esbuild gets to it: above the hook before bundling, and
 * above each relative import's target as it is resolved. What esbuild finds
 * on its own (packages under `node_modules`) is covered by the deadline.
 * `seen` holds the folders already checked.
 */
async function checkPackageFiles(
  dirs: readonly string[],
  seen = new Set<string>(),
): Promise<void> {
  for (const start of dirs) {
    for (let dir = start; !seen.has(dir); dir = dir.replace(/\/[^/]*$/, "") || "/") {
      seen.add(dir);
      const path = `${dir === "/" ? "" : dir}/package.json`;
      const info = await Deno.stat(path).catch(() => null);
      if (info !== null && (!info.isFile || info.size > 1024 * 1024)) {
        throw new HookboxError(
          "COMPILE_FAILED",
          `${path} is ${info.isFile ? "over 1 MiB" : "not a regular file"}; the bundler reads it`,
          { path },
        );
      }
      if (dir === "/") break;
    }
  }
}

/**
 * Bundles under way in this process. esbuild runs one service process for
 * all of them: the last to finish stops it (one that hit its deadline stops
 * it at once, ending the others' builds too — they fail, and may be retried).
 */
let bundling = 0;

/** {@linkcode bundleJsHook}, plus the absolute paths of the files the bundle read. */
export async function bundleJsHookWithInputs(
  entryPath: string,
  roots: readonly string[],
  deadlineMs = BUNDLE_DEADLINE_MS,
): Promise<{ code: string; inputs: string[]; lines: LineTable | null }> {
  const denied: string[] = [];
  let result: esbuild.BuildResult;
  await checkPackageFiles([splitPath(entryPath).dir, ...roots]);
  // The entry is parsed alone first (`hasDefaultExport`), before the plugins see it.
  const entryDepth = nesting(await Deno.readTextFile(entryPath));
  if (entryDepth > MAX_NESTING) throw tooDeep(entryPath, entryDepth);
  // Loaded here, not at start-up: a one-shot dispatch of unchanged hooks never bundles.
  const esbuild = await import("esbuild");
  let functionStyle = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let overran = false;
  // A read esbuild blocks on (a FIFO deep in the tree) ends at the deadline: stopping
  // esbuild ends its process, and the build is answered COMPILE_FAILED.
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      overran = true;
      reject(
        new HookboxError(
          "COMPILE_FAILED",
          `bundling did not finish within ${deadlineMs} ms (a file it reads may block: a FIFO?)`,
          { path: entryPath },
        ),
      );
    }, deadlineMs);
  });
  const bounded = <T>(work: Promise<T>): Promise<T> => {
    work.catch(() => {}); // settled (or not) after the deadline: never an unhandled rejection
    return Promise.race([work, deadline]);
  };
  bundling++;
  try {
    functionStyle = await bounded(hasDefaultExport(esbuild, entryPath));
    const options = { ...buildOptions(entryPath, roots, denied, functionStyle), metafile: true };
    result = await bounded(esbuild.build(options));
  } catch (err) {
    throw isHookboxError(err) ? err : failure(err, entryPath, denied);
  } finally {
    clearTimeout(timer);
    deadline.catch(() => {});
    if (--bundling === 0 || overran) await esbuild.stop();
  }
  const outputs = result.outputFiles ?? [];
  // Without esbuild's closing `//# sourceMappingURL=` comment: the map is read here.
  const code = (outputs.find((f) => f.path.endsWith(".js"))?.text ?? "")
    .replace(/\/\/# sourceMappingURL=\S*\s*$/, "");
  const mapText = outputs.find((f) => f.path.endsWith(".map"))?.text ?? null;
  const base = splitPath(entryPath).dir;
  const inputs = Object.keys(result.metafile?.inputs ?? {})
    .filter((p) => !/^[a-z-]+:/.test(p) && p !== "hookbox-entry.js")
    .map((p) => p.startsWith("/") ? p : normalise(`${base}/${p}`));
  const wrapped = usesTopLevelAwait(code)
    ? `(async () => {\n${code}\n})();\n`
    : `(() => {\n${code}\n})();\n`;
  // The engine's trace lines count from the marker and the wrapper's first line.
  const prefix = (functionStyle ? 1 : 0) + 1;
  const lines = mapText === null
    ? null
    : lineTable(mapText, code.split("\n").length, prefix, splitPath(entryPath).dir, roots[0]!);
  return { code: functionStyle ? FUNCTION_MARKER + wrapped : wrapped, inputs, lines };
}

/**
 * True when `code` (esbuild's ESM output) needs an async wrapper: it does not
 * parse as the body of a plain function, which is the case exactly when it
 * awaits at top level (ESM code is strict, so `await` is never a name in it).
 * Only parsed, never run.
 */
function usesTopLevelAwait(code: string): boolean {
  try {
    new Function(code);
    return false;
  } catch {
    return true;
  }
}

/**
 * True when the entry module has a default export: a function-style hook
 * (`export default function (event) { ... }`). Read from esbuild's analysis
 * of the entry alone, so nothing of the hook runs to find out.
 */
async function hasDefaultExport(
  esbuild: typeof import("esbuild"),
  entryPath: string,
): Promise<boolean> {
  const result = await esbuild.build({
    entryPoints: [entryPath],
    absWorkingDir: splitPath(entryPath).dir,
    bundle: false,
    write: false,
    metafile: true,
    format: "esm",
    platform: "node",
    outdir: "/hookbox-analysis",
    tsconfigRaw: "{}",
    logLevel: "silent",
  });
  return Object.values(result.metafile?.outputs ?? {}).some((o) => o.exports.includes("default"));
}

/** Resolves `.` and `..` segments of an absolute path. */
function normalise(path: string): string {
  const out: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") out.pop();
    else out.push(part);
  }
  return `/${out.join("/")}`;
}
