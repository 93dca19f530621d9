/**
 * The service's hook builder on Deno: writes an uploaded folder into a fresh
 * temporary directory, validates it with the same code discovery uses, refuses
 * subprocess hooks, compiles JS/TS/AssemblyScript, and checks that the plugin
 * would load (imports, features, size) before anything is stored.
 *
 * @module
 */
import { loadHookApart, parseUploadApart, unpackApart } from "./unpack.ts";
import { hookProblems, withoutUploadRoot } from "./hook_problems.ts";
import { sha256HexInPieces } from "../../host-deno/sha256.ts";
import { compileHook, runCommand } from "../../compile/mod.ts";
import { isErrorCode } from "../../core/errors.ts";
import { MAX_PLUGIN_BYTES, MAX_UPLOAD_FILES } from "../../core/hook/files.ts";
import { DEFAULT_POLICY } from "../../core/policy.ts";
import {
  type BuiltHook,
  type HookBuilder,
  HookRejected,
  type HookTestReport,
  type Problem,
} from "../../service/builder.ts";
import { checkPluginApart } from "./plugin_check.ts";
import { tooManyFilesProblem } from "../../service/archive.ts";
import { LONG_CALL_NICE, niceCommand } from "../../host-deno/nice.ts";

/** Options of {@linkcode createDenoHookBuilder}. */
export interface DenoHookBuilderOptions {
  /** Compiler cache. @default the compilers' default */
  cacheDir?: string;
  /** Largest plugin accepted, KiB. @default the default policy's moduleKb */
  moduleKb?: number;
  /** Time one compilation may take, ms. @default COMPILE_TIMEOUT_MS (120 s) */
  compileTimeoutMs?: number;
  /** Time the check of one plugin may take, ms. @default PLUGIN_CHECK_TIMEOUT_MS (60 s) */
  checkTimeoutMs?: number;
}

/** A builder that compiles with the local toolchains. */
export function createDenoHookBuilder(options: DenoHookBuilderOptions = {}): HookBuilder {
  return {
    unpack: unpackApart,
    parseUpload: parseUploadApart,
    sha256: sha256HexInPieces,
    test: (name, files) => testIn(name, files),
    async build(name, files) {
      try {
        return await buildIn(name, files);
      } catch (err) {
        // No answer names the server's own folders: paths are the upload's own.
        if (!(err instanceof HookRejected)) throw err;
        throw new HookRejected(err.problems.map((p) => ({
          ...p,
          path: p.path === null ? null : withoutUploadRoot(p.path) || null,
          message: withoutUploadRoot(p.message),
        })));
      }
    },
  };

  async function testIn(
    name: string,
    files: ReadonlyMap<string, Uint8Array>,
  ): Promise<HookTestReport> {
    const { root, dir } = await uploadFolder(name, files);
    try {
      const report = await runTestsApart(dir, options);
      return {
        cases: report.cases.map((c) => ({ ...c, failures: c.failures.map(withoutUploadRoot) })),
      };
    } finally {
      await Deno.remove(root, { recursive: true }).catch(() => {});
    }
  }

  async function buildIn(
    name: string,
    files: ReadonlyMap<string, Uint8Array>,
  ): Promise<BuiltHook> {
    const { root, dir } = await uploadFolder(name, files);
    try {
      // Its manifest read on a worker: parsing YAML takes tens of ms for a 16 KiB frontmatter.
      const hook = await loadHookApart(dir);
      if (hook.entry.runtime === "subprocess") {
        throw new HookRejected([{
          code: "SUBPROCESS_DENIED",
          path: hook.entry.path.slice(dir.length + 1),
          field: null,
          message: "uploaded hooks cannot be subprocess hooks: use .wasm, JS/TS or AssemblyScript",
        }]);
      }
      if (hook.entry.runtime === "prompt") {
        return {
          manifest: hook.manifest,
          body: hook.body,
          runtime: "prompt",
          plugin: null,
          builtFrom: "prompt",
        };
      }
      const format = hook.entry.format;
      // A plugin is read as it is; a source is compiled in its own process, bounded in time
      // and memory, so a hostile source cannot stall or exhaust the service.
      const compiled = format === "wasm"
        ? await rejecting(() =>
          compileHook(hook, options.cacheDir ? { cacheDir: options.cacheDir } : {})
        )
        : await compileApart(dir, hook.name, root, options);
      const moduleKb = Math.min(
        options.moduleKb ?? DEFAULT_POLICY.moduleKb,
        MAX_PLUGIN_BYTES / 1024,
      );
      await rejecting(() =>
        checkPluginApart({
          bytes: compiled.bytes,
          limits: { memoryMb: DEFAULT_POLICY.maxMemoryMb, moduleKb },
          path: hook.entry.runtime === "wasm" ? hook.entry.path : undefined,
        }, options.checkTimeoutMs)
      );
      // The folder's own tests (tests/*.json), through the sandbox, before anything is stored.
      if ([...files.keys()].some((p) => /^tests\/[^/]+\.json$/.test(p))) {
        await testApart(dir, options);
      }
      return {
        manifest: hook.manifest,
        body: hook.body,
        runtime: "wasm",
        plugin: compiled.bytes,
        builtFrom: format,
      } satisfies BuiltHook;
    } finally {
      await Deno.remove(root, { recursive: true }).catch(() => {});
    }
  }
}

/**
 * The uploaded `files` written under a new temporary folder, as `root/NAME/…`
 * (paths checked first: a bad one is a rejection, never a write outside).
 */
async function uploadFolder(
  name: string,
  files: ReadonlyMap<string, Uint8Array>,
): Promise<{ root: string; dir: string }> {
  const problems = checkPaths(files);
  if (problems.length > 0) throw new HookRejected(problems);
  const root = await Deno.makeTempDir({ prefix: "hookbox-upload-" });
  const dir = `${root}/${name}`;
  try {
    for (const [path, bytes] of files) {
      const target = `${dir}/${path}`;
      await Deno.mkdir(target.slice(0, target.lastIndexOf("/")), { recursive: true });
      await writeInPieces(target, bytes);
    }
  } catch (err) {
    await Deno.remove(root, { recursive: true }).catch(() => {});
    throw err;
  }
  return { root, dir };
}

/**
 * Writes a new file a mebibyte at a time: `Deno.writeFile` copies all its
 * bytes on the calling thread before it writes (about 25 ms for 60 MiB, on
 * the thread that answers every tenant's events).
 */
async function writeInPieces(path: string, bytes: Uint8Array): Promise<void> {
  using file = await Deno.open(path, { write: true, createNew: true });
  for (let at = 0; at < bytes.byteLength;) {
    at += await file.write(bytes.subarray(at, Math.min(at + WRITE_PIECE_BYTES, bytes.byteLength)));
  }
}
const WRITE_PIECE_BYTES = 1024 * 1024;

/** Time one upload's compilation may take. */
export const COMPILE_TIMEOUT_MS = 120_000;
/** Heap the compiling process may use, MiB. */
const COMPILE_HEAP_MB = 1024;
const CLI = new URL("../../cli/main.ts", import.meta.url).pathname;

/** Runs `hookbox compile` on the folder in a subprocess and reads the plugin it wrote. */
async function compileApart(
  dir: string,
  name: string,
  root: string,
  options: DenoHookBuilderOptions,
): Promise<{ bytes: Uint8Array }> {
  const out = `${root}/.out`;
  const timeoutMs = options.compileTimeoutMs ?? COMPILE_TIMEOUT_MS;
  // Below the plugin workers: a compiler never takes a core from the request thread, nor from
  // other tenants' hooks.
  const { cmd, args } = niceCommand(Deno.execPath(), [
    "run",
    "-A",
    `--v8-flags=--max-old-space-size=${COMPILE_HEAP_MB}`,
    CLI,
    "compile",
    dir,
    "--out",
    out,
    ...(options.cacheDir ? ["--cache-dir", options.cacheDir] : []),
  ], LONG_CALL_NICE);
  const result = await runCommand(
    cmd,
    args,
    undefined,
    { timeoutMs, maxOutput: 64 * 1024 },
  );
  if (result.timedOut) {
    throw new HookRejected([{
      code: "COMPILE_FAILED",
      path: null,
      field: null,
      message: `the hook did not finish compiling in ${timeoutMs} ms`,
    }]);
  }
  if (result.code !== 0) throw new HookRejected([problemOf(result.stderr)]);
  return { bytes: await Deno.readFile(`${out}/${name}.wasm`) };
}

/**
 * Runs `hookbox test` on the uploaded folder in a subprocess (the hook's code
 * runs in the sandbox there, at the compilers' priority, never on the thread
 * that answers events); every failed case is a `HOOK_TEST_FAILED` problem
 * naming its file and what differed.
 */
async function testApart(dir: string, options: DenoHookBuilderOptions): Promise<void> {
  const report = await runTestsApart(dir, options);
  const problems = report.cases.filter((c) => !c.passed).map((c) => ({
    code: "HOOK_TEST_FAILED" as const,
    path: c.file,
    field: null,
    message: `${c.file}: ${c.failures.join("; ")}`,
  }));
  if (problems.length > 0) throw new HookRejected(problems);
}

/** `hookbox test --json` on `dir` in a process of its own; its report. */
async function runTestsApart(
  dir: string,
  options: DenoHookBuilderOptions,
): Promise<HookTestReport> {
  const timeoutMs = options.compileTimeoutMs ?? COMPILE_TIMEOUT_MS;
  const { cmd, args } = niceCommand(Deno.execPath(), [
    "run",
    "-A",
    `--v8-flags=--max-old-space-size=${COMPILE_HEAP_MB}`,
    CLI,
    "test",
    dir,
    "--json",
    ...(options.cacheDir ? ["--cache-dir", options.cacheDir] : []),
  ], LONG_CALL_NICE);
  const result = await runCommand(cmd, args, undefined, { timeoutMs, maxOutput: 1024 * 1024 });
  const failed = (message: string): never => {
    throw new HookRejected([{ code: "HOOK_TEST_FAILED", path: "tests", field: null, message }]);
  };
  if (result.timedOut) failed(`the hook's tests did not finish in ${timeoutMs} ms`);
  let report: Partial<HookTestReport>;
  try {
    report = JSON.parse(new TextDecoder().decode(result.stdout));
  } catch {
    return failed(`the tests could not be run: ${result.stderr.trim().slice(-1000)}`);
  }
  const cases = report.cases ?? [];
  if (result.code !== 0 && cases.every((c) => c.passed)) {
    failed(`the tests could not be run: ${result.stderr.trim().slice(-1000)}`);
  }
  return { cases };
}

/** The problem `hookbox compile` reported on its last stderr line (`hookbox: CODE path: message`). */
function problemOf(stderr: string): Problem {
  const line = stderr.trim().split("\n").findLast((l) => l.startsWith("hookbox: ")) ?? "";
  const m = /^hookbox: ([A-Z_]+)(?: (\/\S*))?: (.*)$/.exec(line);
  if (!m) {
    const message = `the compiler failed: ${stderr.trim().slice(-2000) || "no output"}`;
    return { code: "COMPILE_FAILED", path: null, field: null, message };
  }
  const path = m[2] === undefined ? null : withoutUploadRoot(m[2]) || null;
  const code = isErrorCode(m[1]!) ? m[1] : "COMPILE_FAILED";
  return { code, path, field: null, message: m[3]! };
}

/** Longest file or folder name a file system takes, bytes. */
const MAX_NAME_BYTES = 255;
const ENCODER = new TextEncoder();

/**
 * Relative, normalised paths only: no `..`, no absolute paths, no
 * backslashes, names a file system takes, and no path that is both a file and
 * a folder (`scripts` and `scripts/run.wasm`).
 */
function checkPaths(files: ReadonlyMap<string, Uint8Array>): Problem[] {
  const problems: Problem[] = [];
  if (files.size > MAX_UPLOAD_FILES) problems.push(tooManyFilesProblem(files.size));
  const folders = new Set<string>();
  for (const path of files.keys()) {
    const parts = path.split("/");
    for (let i = 1; i < parts.length; i++) folders.add(parts.slice(0, i).join("/"));
  }
  for (const path of files.keys()) {
    const parts = path.split("/");
    const bad = path.length === 0 || path.length > 255 || path.startsWith("/") ||
      path.includes("\\") || path.includes("\0") ||
      parts.some((p) => p === "" || p === "." || p === "..");
    const problem = (message: string) =>
      problems.push({
        code: "HOOK_PATH_OUTSIDE",
        path: path.slice(0, 255),
        field: "files",
        message,
      });
    if (bad) {
      problem(
        `file path "${path.slice(0, 80)}" must be relative, inside the folder, without . or ..`,
      );
    } else if (parts.some((p) => ENCODER.encode(p).byteLength > MAX_NAME_BYTES)) {
      // A file system refuses a longer name (ENAMETOOLONG), whatever the characters.
      problem(`a name in "${path.slice(0, 80)}" is over ${MAX_NAME_BYTES} bytes of UTF-8`);
    } else if (folders.has(path)) {
      problem(`"${path.slice(0, 80)}" is both a file and a folder of other files`);
    }
  }
  if (!files.has("HOOK.md")) {
    problems.push({
      code: "HOOK_MANIFEST_MISSING",
      path: "HOOK.md",
      field: "files",
      message: "the folder has no HOOK.md",
    });
  }
  return problems;
}

/** Runs `fn`, turning a coded error into a rejection with its problem. */
async function rejecting<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    const problems = hookProblems(err);
    if (problems === null) throw err;
    throw new HookRejected(problems);
  }
}
