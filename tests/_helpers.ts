/**
 * Shared test helpers: temporary hook folders on disk, in-memory hook
 * definitions, and a fake in-process runtime for dispatcher tests.
 *
 * @module
 */
import { stringify } from "yaml";
import type { HookDefinition, HookEntry, HookLevel } from "../packages/core/hook/types.ts";
import type {
  RunRequest,
  RunResult,
  Runtime,
  RuntimeKind,
} from "../packages/core/runtime/types.ts";
import type { HookEvent } from "../packages/core/schema/event.ts";
import { manifestSchema } from "../packages/core/schema/manifest.ts";

/** The keys of a dispatch result (SPEC §4, plus `enable_tools`), sorted. */
export const RESULT_KEYS: readonly string[] = [
  "blocked_by",
  "decision",
  "disable_tools",
  "enable_tools",
  "event_type",
  "hooks",
  "inject",
  "modified_input",
  "modified_output",
  "reason",
  "store",
];

/** Absolute path of the repository root. */
export const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");

/** One file of a hook folder: text, or text with a Unix mode. */
export type FileSpec = string | { content: string; mode: number };

/** How to write one hook folder. */
export interface HookSpec {
  /** Frontmatter as an object (serialised to YAML) or raw HOOK.md text. */
  frontmatter?: Record<string, unknown>;
  /** Raw HOOK.md text; replaces `frontmatter` and `body`. */
  raw?: string;
  body?: string;
  /** Files relative to the hook folder (`scripts/run.sh`). */
  files?: Record<string, FileSpec>;
  /** Write no HOOK.md at all. */
  noHookMd?: boolean;
}

/** A temporary folder removed on dispose (`await using tree = await tempTree()`). */
export interface TempTree extends AsyncDisposable {
  root: string;
  /** Creates `rel` (a folder) under the root and returns its absolute path. */
  dir(rel: string): Promise<string>;
  /** Writes hook `name` into the folder `parent` (relative to the root); returns its path. */
  hook(parent: string, name: string, spec?: HookSpec): Promise<string>;
}

/** Folders made by {@linkcode tempDir}, removed when the test process ends. */
const madeDirs = new Set<string>();
let removeOnUnload = false;

/**
 * A new temporary folder named `prefix…`, removed (with what it holds) when
 * the test process ends: tests whose servers or stores still hold files
 * while the test finishes leave nothing behind in the system's folder.
 */
export async function tempDir(prefix: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix });
  madeDirs.add(dir);
  if (!removeOnUnload) {
    removeOnUnload = true;
    globalThis.addEventListener("unload", () => {
      for (const made of madeDirs) {
        try {
          Deno.removeSync(made, { recursive: true });
        } catch { /* already gone */ }
      }
    });
  }
  return dir;
}

/** Makes a fresh temporary folder for one test. */
export async function tempTree(): Promise<TempTree> {
  const root = await Deno.realPath(await tempDir("hookbox_test_"));
  const dir = async (rel: string) => {
    const path = rel === "" ? root : `${root}/${rel}`;
    await Deno.mkdir(path, { recursive: true });
    return path;
  };
  return {
    root,
    dir,
    async hook(parent, name, spec = {}) {
      const path = await dir(parent === "" ? name : `${parent}/${name}`);
      await writeHook(path, name, spec);
      return path;
    },
    async [Symbol.asyncDispose]() {
      await Deno.remove(root, { recursive: true }).catch(() => {});
    },
  };
}

/** Writes HOOK.md and files into `path`. Frontmatter defaults: name, description, trigger. */
export async function writeHook(path: string, name: string, spec: HookSpec): Promise<void> {
  if (!spec.noHookMd) {
    const text = spec.raw ?? hookMd({ name, ...spec.frontmatter }, spec.body ?? "");
    await Deno.writeTextFile(`${path}/HOOK.md`, text);
  }
  for (const [rel, file] of Object.entries(spec.files ?? {})) {
    const target = `${path}/${rel}`;
    await Deno.mkdir(target.slice(0, target.lastIndexOf("/")), { recursive: true });
    const { content, mode } = typeof file === "string" ? { content: file, mode: 0o644 } : file;
    await Deno.writeTextFile(target, content);
    await Deno.chmod(target, mode);
  }
}

/** HOOK.md text for `frontmatter` (description and trigger filled in when absent). */
export function hookMd(frontmatter: Record<string, unknown>, body = ""): string {
  const fm = { description: "test hook", trigger: "pre-tool-call", ...frontmatter };
  return `---\n${stringify(fm)}---\n${body}\n`;
}

/** An executable shell script file spec. */
export function sh(script: string): FileSpec {
  return { content: `#!/usr/bin/env bash\n${script}\n`, mode: 0o755 };
}

/** An empty `plugin.wasm`, enough for discovery to pick the wasm runtime (fake in tests). */
export const WASM_STUB: Record<string, FileSpec> = { "plugin.wasm": "" };

/** Builds a validated hook definition in memory (no files). */
export function fakeHook(
  frontmatter: Record<string, unknown> & { name: string },
  options: { level?: HookLevel; entry?: HookEntry; body?: string } = {},
): HookDefinition {
  const manifest = manifestSchema().parse({
    description: "test hook",
    trigger: "pre-tool-call",
    ...frontmatter,
  });
  return {
    name: manifest.name,
    level: options.level ?? "project",
    dir: `/fake/${manifest.name}`,
    manifest,
    body: options.body ?? "",
    entry: options.entry ?? { runtime: "wasm", format: "wasm", path: `/fake/plugin.wasm` },
  };
}

/** What a fake hook does with the event it receives. */
export type Behaviour = (
  event: HookEvent,
  request: RunRequest,
) => Partial<RunResult> | Promise<Partial<RunResult>>;

/** One call the fake runtime received. */
export interface FakeCall {
  hook: string;
  event: HookEvent;
  /** The exact bytes handed to the hook. */
  input: string;
  env: Record<string, string>;
}

/** A runtime that answers by hook name, in-process, and records every call. */
export interface FakeRuntime extends Runtime {
  calls: FakeCall[];
}

/** Creates a fake runtime; hooks without a behaviour exit 0 with no output. */
export function fakeRuntime(
  behaviours: Record<string, Behaviour> = {},
  kind: RuntimeKind = "wasm",
): FakeRuntime {
  const calls: FakeCall[] = [];
  return {
    kind,
    calls,
    async run(request) {
      const input = new TextDecoder().decode(request.input);
      const event = JSON.parse(input) as HookEvent;
      calls.push({ hook: request.hook.name, event, input, env: request.env });
      const answer = await (behaviours[request.hook.name]?.(event, request) ?? {});
      return { exitCode: 0, stdout: "", stderr: "", ...answer };
    },
  };
}

/** Behaviour: exit 0 printing `control` as JSON. */
export function prints(control: unknown): Behaviour {
  return () => ({ exitCode: 0, stdout: JSON.stringify(control) });
}

/** Behaviour: exit 2 with `reason` on stderr. */
export function exits2(reason: string): Behaviour {
  return () => ({ exitCode: 2, stderr: reason });
}

/** A valid pre-tool-call event. */
export function toolEvent(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    event_type: "pre-tool-call",
    session_id: "sess-1",
    tool_name: "Bash",
    tool_input: { command: "ls -la" },
    ...overrides,
  };
}

/** What a finished subprocess printed. */
export interface ProcessOutput {
  exitCode: number;
  stdout: string;
  stderr: string;
}

const DENO_LOCK_NOTICE = "Blocking waiting for file lock on node_modules directory";

/**
 * `stderr` without the notice Deno itself prints when another `deno` process
 * holds the `node_modules` lock (it syncs the folder at start-up, and tests
 * run in parallel): the launcher's line, never the program's.
 */
export function withoutDenoNotices(stderr: string): string {
  return stderr
    .split("\n")
    // deno-lint-ignore no-control-regex
    .filter((line) => line.replace(/\x1b\[[0-9;]*m/g, "") !== DENO_LOCK_NOTICE)
    .join("\n");
}

/** Runs `cmd args...` with `input` on stdin and returns its exit code and output. */
export async function runWithStdin(
  cmd: string,
  args: string[],
  input: string,
  options: Omit<Deno.CommandOptions, "args" | "stdin" | "stdout" | "stderr"> = {},
): Promise<ProcessOutput> {
  const child = new Deno.Command(cmd, {
    ...options,
    args,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(input));
  await writer.close();
  const out = await child.output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return {
    exitCode: out.code,
    stdout: text(out.stdout),
    stderr: withoutDenoNotices(text(out.stderr)),
  };
}

/** Kills process `pid` (a daemon a test started), if it still runs. */
export function killIfRunning(pid: number | null): void {
  if (pid === null) return;
  try {
    Deno.kill(pid, "SIGKILL");
  } catch { /* gone already */ }
}

/**
 * Waits, if need be, until the clock is at most `seconds` into its minute: per-minute quotas count
 * per clock minute, so a burst started later could cross into the next one and be counted twice.
 */
export async function earlyInMinute(seconds = 40): Promise<void> {
  const into = Date.now() % 60_000;
  if (into > seconds * 1000) await new Promise((resolve) => setTimeout(resolve, 60_250 - into));
}

/** Calls `read` until it gives a value (at most `tries` times, `ms` apart); the value, or null. */
export async function eventually<T>(
  read: () => Promise<T | null>,
  tries = 100,
  ms = 200,
): Promise<T | null> {
  for (let i = 0; i < tries; i++) {
    const value = await read();
    if (value !== null) return value;
    await new Promise((resolve) => setTimeout(resolve, ms));
  }
  return null;
}

/**
 * `length` seeded-random letters a and b: text on which every NFA thread of
 * a pattern like `a[ab]{25}[^ab]` stays alive (matcher budget tests).
 */
export function abText(length: number): string {
  let seed = 12345;
  const out: string[] = [];
  for (let i = 0; i < length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    out.push(seed & 0x10000 ? "a" : "b");
  }
  return out.join("");
}
