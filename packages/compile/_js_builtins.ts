/**
 * Which Node built-in modules a JS/TS hook may import. The allowed ones are
 * served by the engine prelude (`plugins/engine/prelude/80_modules.js`);
 * every other built-in is refused at compile time with COMPILE_API_DENIED.
 *
 * @module
 */

/** Built-ins the prelude implements (sandbox-safe subsets). */
export const ALLOWED_BUILTINS = [
  "buffer",
  "events",
  "fs",
  "fs/promises",
  "path",
  "path/posix",
  "process",
  "timers",
  "timers/promises",
  "url",
  "util",
] as const;

const PATH_EXPORTS = [
  "basename",
  "delimiter",
  "dirname",
  "extname",
  "isAbsolute",
  "join",
  "normalize",
  "posix",
  "relative",
  "resolve",
  "sep",
] as const;

/**
 * The names each allowed built-in's prelude object has (its own enumerable
 * keys), for `import { name } from "fs"`: the bundle then reads them off the
 * object once per run instead of copying every property through esbuild's
 * CommonJS interop (about a million instructions per call for `fs`).
 * `process` is not listed: its methods live on its prototype, so it keeps
 * the CommonJS route. A test compares these lists with the engine's objects.
 */
export const BUILTIN_EXPORTS: Partial<
  Record<(typeof ALLOWED_BUILTINS)[number], readonly string[]>
> = {
  buffer: ["Buffer"],
  events: ["EventEmitter"],
  fs: [
    "accessSync",
    "appendFile",
    "appendFileSync",
    "chmodSync",
    "constants",
    "copyFileSync",
    "createReadStream",
    "createWriteStream",
    "existsSync",
    "lstatSync",
    "mkdir",
    "mkdirSync",
    "mkdtempSync",
    "open",
    "openSync",
    "promises",
    "readFile",
    "readFileSync",
    "readdir",
    "readdirSync",
    "realpathSync",
    "renameSync",
    "rm",
    "rmSync",
    "stat",
    "statSync",
    "symlinkSync",
    "unlink",
    "unlinkSync",
    "watch",
    "writeFile",
    "writeFileSync",
    "writeSync",
  ],
  "fs/promises": [
    "access",
    "appendFile",
    "mkdir",
    "open",
    "readFile",
    "readdir",
    "rm",
    "stat",
    "unlink",
    "writeFile",
  ],
  path: PATH_EXPORTS,
  "path/posix": PATH_EXPORTS,
  timers: [
    "clearImmediate",
    "clearInterval",
    "clearTimeout",
    "setImmediate",
    "setInterval",
    "setTimeout",
  ],
  "timers/promises": ["setImmediate", "setTimeout"],
  url: ["URL", "URLSearchParams"],
  util: [
    "TextDecoder",
    "TextEncoder",
    "format",
    "inspect",
    "isDeepStrictEqual",
    "promisify",
    "types",
  ],
};

/** Node built-ins that exist but are not available inside the sandbox. */
export const DENIED_BUILTINS = [
  "assert",
  "assert/strict",
  "async_hooks",
  "child_process",
  "cluster",
  "console",
  "crypto",
  "dgram",
  "diagnostics_channel",
  "dns",
  "dns/promises",
  "domain",
  "http",
  "http2",
  "https",
  "inspector",
  "module",
  "net",
  "os",
  "perf_hooks",
  "punycode",
  "querystring",
  "readline",
  "readline/promises",
  "repl",
  "sqlite",
  "stream",
  "stream/promises",
  "stream/web",
  "string_decoder",
  "sys",
  "test",
  "tls",
  "trace_events",
  "tty",
  "v8",
  "vm",
  "wasi",
  "worker_threads",
  "zlib",
] as const;

const ALLOWED = new Set<string>(ALLOWED_BUILTINS);
const DENIED = new Set<string>(DENIED_BUILTINS);

/** How an import specifier relates to Node's built-ins. */
export type BuiltinKind = "allowed" | "denied" | "other";

/** Classifies `specifier` (`fs`, `node:fs`, `node:child_process`, `./lib.js`). */
export function classifyBuiltin(specifier: string): { kind: BuiltinKind; id: string } {
  const prefixed = specifier.startsWith("node:");
  const id = prefixed ? specifier.slice(5) : specifier;
  if (ALLOWED.has(id)) return { kind: "allowed", id };
  if (DENIED.has(id) || prefixed) return { kind: "denied", id };
  return { kind: "other", id };
}

/** esbuild `onResolve` filter matching every bare specifier that may be a built-in. */
export const BUILTIN_FILTER = /^(node:.*|[a-z_0-9]+(\/[a-z_0-9]+)?)$/;
